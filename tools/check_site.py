"""Check the built site: math is typeset offline by the vendored MathJax, no page loads anything from a CDN,
every image is present and non-empty, no internal link is broken, no build marker is rendered, the API reference
is complete and linked, and no link points at a placeholder repository.

Usage: python tools/check_site.py [_build/html] [--pages nbs/00_foundations.html ...] [--jobs 2]

For every page named (default: every page of the book's table of contents, read from _toc.yml) headless Chromium
renders the file with the network closed off (`--jobs` pages at once), and the DOM it dumps must hold one
<mjx-container> per math element of the page and no <mjx-merror>. Every built page is also scanned for external
script or stylesheet URLs, for images that are missing or empty, and for links to pages or anchors that do not
exist; for code lines that are nbdev directives (`#| export`) or nbval markers (`# NBVAL_IGNORE_OUTPUT`); for cells
tagged `hide-input` that are not collapsed; for an API reference (nbs/api.html) that lacks a section for a module of
the package, an entry of a module's `__all__`, or an entry's link back to its chapter; and for links to a
placeholder or to launch services (Binder, Colab) when settings.ini names no repository. Every chapter page must
offer its notebook for download. No page title (the browser tab, the print heading) and no entry of the sidebar or
of the previous/next links shows TeX: a '_', '$' or backslash outside inline code (a title's formula is written
there as Unicode, "E<sub>γ</sub>", by tools/ldpbook_sphinx.py).

What a reader sees: no page shows unparsed MyST in its prose (a directive fence, an option line such as `:label:`,
a role such as {prf:ref}`...`, a `(target)=` line or TeX between dollars shown as text), and at a laptop's width
(a 1366-px window) nothing needs horizontal scrolling: no code block (a cell's input or output, or a block of the
prose; folds opened), display or inline equation, table, API signature, image or other box is wider than its room,
and no page is wider than the window. Chromium measures each one's scroll width against its visible width. A block of
the prose that wraps a long line (assets/ldpbook.css) fits, and the report counts it. A self-test first shows, on a
saved page, that each of these checks fails where it must.
"""
import argparse
import base64
import configparser
import importlib
import json
import html
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--virtual-time-budget=15000", "--dump-dom"]
EXTERNAL_ASSET = re.compile(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=[\"'](?:https?:)?//[^\"']+", re.I)
CDN_HOSTS = re.compile(r"cdn\.jsdelivr|cdnjs\.cloudflare|unpkg\.com|mathjax\.org|polyfill\.io", re.I)
MATH_ELEMENT = re.compile(r"<(?:span|div)[^>]*class=\"[^\"]*\bmath\b[^\"]*\"", re.I)


IMAGE_SRC = re.compile(r"<img\b[^>]*\bsrc=[\"']([^\"']+)[\"']", re.I)
LINK_HREF = re.compile(r"<a\b[^>]*\bhref=[\"']([^\"']+)[\"']", re.I)
ELEMENT_ID = re.compile(r"\bid=[\"']([^\"']+)[\"']")


def broken_images(site: Path):
    "Every (page, src) whose image file is missing or empty, or whose data URI holds no data."
    found = []
    for page in site.rglob("*.html"):
        for src in IMAGE_SRC.findall(page.read_text(encoding="utf-8", errors="replace")):
            src = html.unescape(src)
            if src.startswith("data:"):
                payload = src.split(",", 1)[-1]
                if not payload or (";base64" in src.split(",", 1)[0] and not base64.b64decode(payload)):
                    found.append((page, src[:40]))
            elif not re.match(r"^(?:[a-z]+:)?//", src):
                target = (page.parent / src.split("#")[0].split("?")[0]).resolve()
                if not target.is_file() or target.stat().st_size == 0:
                    found.append((page, src))
    return found


def broken_links(site: Path):
    "Every (page, href) of an internal link whose page does not exist or lacks the anchor."
    ids, found = {}, []

    def anchors(target):
        if target not in ids:
            ids[target] = set(ELEMENT_ID.findall(target.read_text(encoding="utf-8", errors="replace")))
        return ids[target]

    for page in site.rglob("*.html"):
        for href in LINK_HREF.findall(page.read_text(encoding="utf-8", errors="replace")):
            href = html.unescape(href)
            if re.match(r"^(?:[a-z][a-z0-9+.-]*:|//)", href, re.I):
                continue                                   # external, mailto:, javascript: …
            path, _, fragment = href.partition("#")
            target = (page.parent / path.split("?")[0]).resolve() if path else page.resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                found.append((page, href))
            elif fragment and target.suffix == ".html" and fragment not in anchors(target):
                found.append((page, href))
    return found


PRE_BLOCK = re.compile(r"<pre\b[^>]*>(.*?)</pre>", re.S | re.I)
MARKER_LINE = re.compile(r"^\s*#\s*\||^\s*#+\s*(?:NBVAL_\w+|PYTEST_VALIDATE_IGNORE_OUTPUT)\b", re.M)


def visible_text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def build_markers(site: Path):
    "Every (page, line) of rendered code (a <pre> block: cell sources and outputs) that is a build marker."
    found = []
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8", errors="replace")
        lines = [visible_text(block) for block in PRE_BLOCK.findall(text)]
        found += [(page, m.group(0).strip()) for chunk in lines for m in MARKER_LINE.finditer(chunk)]
    return found


def open_hidden_inputs(site: Path):
    "Every (page, cell class) of a code cell tagged `hide-input` whose source is not collapsed into a <details>."
    found = []
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8", errors="replace")
        for m in re.finditer(r"<div class=\"(cell [^\"]*\btag_hide-input\b[^\"]*)\"[^>]*>\s*(<[^>]+>)", text):
            if not m.group(2).startswith("<details") or "hide" not in m.group(2):
                found.append((page, m.group(1)))
    return found


def api_problems(site: Path, root: Path):
    """What the API reference page lacks: a module section, an entry of a module's `__all__`, or the link back
    from a top-level entry to the chapter that explains it; and API names in the prose that do not link to it."""
    page = site / "nbs" / "api.html"
    if not page.is_file():
        return [f"{page} is missing"]
    text = page.read_text(encoding="utf-8")
    sys.path.insert(0, str(root))
    modules = [m for m in importlib.import_module("ldpbook._modidx").d["syms"] if not m.rsplit(".", 1)[-1].startswith("_")]
    problems = []
    for module in modules:
        names = getattr(importlib.import_module(module), "__all__", [])
        if names and f'id="module-{module}"' not in text:
            problems.append(f"no section for module {module}")
        problems += [f"no entry for {module}.{name}" for name in names if f'id="{module}.{name}"' not in text]
    entries = re.findall(r'<dl class="py (?:function|class|exception|data)">\s*<dt[^>]*id="([^"]+)"(.*?)</dl>', text, re.S)
    problems += [f"the entry {name} does not link back to a chapter" for name, body in entries
                 if not re.search(r'Explained in <a class="reference internal" href="\d\d_\w+\.html', body)]
    return problems + unlinked_api_names(site, modules)


NOT_PROSE_HTML = re.compile(r"<(h[1-6]|nav|pre|a|script|style|dt)\b.*?</\1>", re.S | re.I)
INLINE_CODE = re.compile(r"<code class=\"docutils literal[^\"]*\">(.*?)</code>", re.S)


def unlinked_api_names(site: Path, modules: list) -> list:
    """Inline code in the prose of a page (not in a heading, a code block or a link) that names an API member
    unambiguously (`name`, `name(...)`, `module.name`, `ldpbook.module.name`) but does not link to its entry."""
    owners = {}
    for module in modules:
        for name in getattr(importlib.import_module(module), "__all__", []):
            for key in (name, f"{module.rsplit('.', 1)[-1]}.{name}", f"{module}.{name}"):
                owners.setdefault(key, set()).add(module)
    problems = []
    for page in sorted(site.rglob("*.html")):
        if page.name == "api.html" or "_static" in page.parts or "_sources" in page.parts:
            continue
        prose = NOT_PROSE_HTML.sub(" ", page.read_text(encoding="utf-8", errors="replace"))
        for code in INLINE_CODE.findall(prose):
            match = re.match(r"^([A-Za-z_][\w.]*)(?:\(.*\))?$", visible_text(code).strip(), re.S)
            if match and len(owners.get(match.group(1), ())) == 1:
                problems.append(f"{page.relative_to(site)}: `{match.group(1)}` does not link to the API reference")
    return problems


def repository_url(root: Path) -> str:
    config = configparser.ConfigParser(delimiters=["="])
    config.read(root / "settings.ini", encoding="utf-8")
    return config["DEFAULT"].get("git_url", "").strip().rstrip("/")


PLACEHOLDER = re.compile(r"//(?:www\.)?(?:github|gitlab)\.com/(?:ldpbook|USER|OWNER|your-?\w*|example)(?:[/\"']|$)|"
                         r"//(?:www\.)?example\.(?:com|org)\b|executablebooks/jupyter-book", re.I)
LAUNCH = re.compile(r"//(?:mybinder\.org|colab\.research\.google\.com|deepnote\.com)\b", re.I)
ANY_URL = re.compile(r"(?:href|src|action)=[\"']((?:https?:)?//[^\"']+)", re.I)


def dishonest_links(site: Path, root: Path):
    """Every (page, url) that points at a placeholder repository, or at a launch service or code host for a
    repository other than settings.ini's git_url (any launch link when git_url is empty)."""
    git_url, found = repository_url(root), []
    repo_path = re.sub(r"^https?://[^/]+", "", git_url)
    for page in site.rglob("*.html"):
        for url in ANY_URL.findall(page.read_text(encoding="utf-8", errors="replace")):
            url = html.unescape(url)
            if git_url and url.rstrip("/").startswith(git_url):
                continue
            if PLACEHOLDER.search(url) and not (git_url and git_url in url):
                found.append((page, url))
            elif LAUNCH.search(url) and not (repo_path and repo_path.split("/", 2)[-1] in url):
                found.append((page, url))
    return found


def missing_downloads(site: Path):
    "Every chapter page without a download link to its own notebook."
    found = []
    for page in sorted((site / "nbs").glob("[0-9]*.html")):
        if f'_sources/nbs/{page.stem}.ipynb"' not in page.read_text(encoding="utf-8"):
            found.append((page, f"_sources/nbs/{page.stem}.ipynb"))
    return found


# ---------------------------------------------------------------------------------------------------------------
# Page titles as text: the browser tab (<title>), the print heading, the sidebar and the previous/next links show a
# page's title as text, where a formula's TeX ("E_\gamma", "$E_\gamma$") would be seen as it is.

TITLE_TAG = re.compile(r"<title>(.*?)</title>", re.S | re.I)
SIDEBAR = re.compile(r"<nav class=\"[^\"]*\bbd-docs-nav\b[^\"]*\"[^>]*>(.*?)</nav>", re.S | re.I)
LINK_TEXT = re.compile(r"<a\b[^>]*>(.*?)</a>", re.S | re.I)
PREV_NEXT = re.compile(r"<p class=\"prev-next-title\">(.*?)</p>", re.S | re.I)
PRINT_HEADING = re.compile(r"<div id=\"jb-print-docs-body\"[^>]*>\s*<h1>(.*?)</h1>", re.S | re.I)
ARTICLE_HEADING = re.compile(r"<h1\b[^>]*>(.*?)</h1>", re.S | re.I)
CODE_SPAN = re.compile(r"<code\b[^>]*>(.*?)</code>", re.S | re.I)
TITLE_TEX = re.compile(r"[_$\\]")


def tex_in_titles_of(page_html: str) -> list:
    """The titles of one page that show TeX ('_', '$' or a backslash outside inline code): the <title>, the print
    heading, the sidebar's entries and the previous/next links, each as '<where>: <text>'."""
    found = []
    codes = [visible_text(c) for heading in ARTICLE_HEADING.findall(page_html) for c in CODE_SPAN.findall(heading)]

    def check(where, fragment):
        text = " ".join(visible_text(CODE_SPAN.sub(" ", fragment)).split())
        if where in ("<title>", "the print heading"):
            for code in codes:                       # the title's inline code, shown as plain text there
                text = text.replace(code, " ")
        if TITLE_TEX.search(text):
            found.append(f"{where}: {' '.join(visible_text(fragment).split())!r}")

    for title in TITLE_TAG.findall(page_html):
        check("<title>", title)
    for heading in PRINT_HEADING.findall(page_html):
        check("the print heading", heading)
    for nav in SIDEBAR.findall(page_html):
        for entry in LINK_TEXT.findall(nav):
            check("a sidebar entry", entry)
    for entry in PREV_NEXT.findall(page_html):
        check("a previous/next link", entry)
    return found


def tex_in_titles(site: Path):
    "Every (page, title) of a built page whose title, sidebar entry or previous/next link shows TeX."
    found, sidebars = [], 0
    for page in sorted(site.rglob("*.html")):
        if "_static" in page.parts or "_sources" in page.parts:
            continue
        text = page.read_text(encoding="utf-8", errors="replace")
        sidebars += bool(SIDEBAR.search(text))
        found += [(page, title) for title in tex_in_titles_of(text)]
    if not sidebars:
        found.append((site / "index.html", "no page has a sidebar to check (has the theme's markup changed?)"))
    return found


# ---------------------------------------------------------------------------------------------------------------
# Unparsed MyST: markup that the parser did not recognise is rendered as text, and a reader sees it.

NOT_PROSE_MYST = re.compile(r"<(pre|code|script|style|textarea|kbd|samp)\b.*?</\1>", re.S | re.I)
MATH_SPAN = re.compile(r"<(span|div) class=\"math[^\"]*\"[^>]*>.*?</\1>", re.S | re.I)
UNPARSED_MYST = re.compile(
    r"(?:`{3,}|~{3,}|^\s*:{3,})\s*\{[\w:-]+\}"                              # a directive fence
    r"|`{3,}|(?:^|\s):(?:label|class|name|nowrap|number|enumerated|tags|align|width|height|alt|figclass|figwidth|"
    r"caption|linenos|emphasize-lines|hidden|open|class-title|class-content|numbered|filter|style):(?=\s|$)"
    r"|\{(?:[a-z]+:[a-z][a-z-]*|cite|ref|doc|eq|numref|math|term|download|abbr|index|glue)\}"  # a role name
    r"|^\s*\([\w-]+\)=\s*$"                                                 # a `(target)=` line
    r"|\$[^$\n]{0,80}?(?:\\[A-Za-z]+|[_^])[^$\n]{0,80}?\$",                   # TeX between dollars, not typeset
    re.M)


def prose_text(page_html: str) -> str:
    "The visible text of a page outside code, math, scripts and styles (tags removed, line structure kept)."
    body = re.split(r"<body\b[^>]*>", page_html, maxsplit=1)[-1]
    body = MATH_SPAN.sub(" ", NOT_PROSE_MYST.sub(" ", body))
    return html.unescape(re.sub(r"<[^>]+>", "", body))


def unparsed_myst_in(page_html: str) -> list:
    "The pieces of unparsed MyST in the prose of one page, each with a little context."
    text = prose_text(page_html)
    return [" ".join(text[max(m.start() - 20, 0):m.end() + 40].split()) for m in UNPARSED_MYST.finditer(text)]


def unparsed_myst(site: Path):
    "Every (page, snippet) of MyST markup shown as text in a built page's prose."
    found = []
    for page in sorted(site.rglob("*.html")):
        if "_static" in page.parts or "_sources" in page.parts:
            continue
        found += [(page, snippet) for snippet in unparsed_myst_in(page.read_text(encoding="utf-8", errors="replace"))]
    return found


# ---------------------------------------------------------------------------------------------------------------
# Layout at a laptop's width: a script injected into a copy of the page measures, after MathJax has typeset the
# page and every fold is opened, each code block, display equation and table, and writes the numbers into the DOM.

WINDOW = (1366, 768)
MEASURE_JS = r"""
(function () {
  function measure() {
    document.querySelectorAll('details').forEach(function (d) { d.open = true; });
    document.querySelectorAll('.toggle-hidden').forEach(function (e) { e.classList.remove('toggle-hidden'); });
    var page = document.documentElement;
    var out = {window: window.innerWidth, code: [], display: [], table: [], signature: [], image: [], other: [],
               inline: [],
               page: {scroll: page.scrollWidth, client: page.clientWidth}, chars: null, font: null};
    var counted = new Set();
    function label(e) {
      return e.tagName.toLowerCase() + (e.className && e.className.baseVal === undefined && e.className ?
             '.' + e.className.trim().split(/\s+/).join('.') : '');
    }
    document.querySelectorAll('pre').forEach(function (pre) {
      var lines = pre.textContent.replace(/\n$/, '').split('\n');
      var kind = pre.closest('div.cell_input') ? 'input' : pre.closest('div.cell_output, div.output') ? 'output' :
                 'block';
      var wrapped = false;
      if (kind === 'block' && getComputedStyle(pre).whiteSpace !== 'pre') {   // does a line wrap?
        var keep = pre.style.whiteSpace;
        pre.style.whiteSpace = 'pre';
        wrapped = pre.scrollWidth > pre.clientWidth + 1;
        pre.style.whiteSpace = keep;
      }
      counted.add(pre);
      out.code.push({kind: kind, scroll: pre.scrollWidth, client: pre.clientWidth, wrapped: wrapped,
                     line: lines.reduce(function (a, b) { return b.length > a.length ? b : a; }, '')});
    });
    document.querySelectorAll('table').forEach(function (t) {
      var box = t.parentElement, head = t.querySelector('th') || t;
      counted.add(box);
      out.table.push({scroll: Math.max(box.scrollWidth, Math.ceil(t.getBoundingClientRect().width)),
                      client: box.clientWidth, head: head.textContent.trim().slice(0, 40)});
    });
    document.querySelectorAll('dl[class] > dt.sig').forEach(function (dt) {
      var right = 0;
      dt.querySelectorAll('*').forEach(function (e) { right = Math.max(right, e.getBoundingClientRect().right); });
      counted.add(dt);
      out.signature.push({scroll: Math.max(dt.scrollWidth, Math.ceil(right - dt.getBoundingClientRect().left)),
                          client: dt.clientWidth, name: (dt.id || dt.textContent.trim()).slice(0, 60)});
    });
    document.querySelectorAll('img').forEach(function (img) {
      var box = img.parentElement.closest('figure, div, p, li, td, section') || img.parentElement;
      var inner = box.getBoundingClientRect();
      var rect = img.getBoundingClientRect();
      out.image.push({scroll: Math.ceil(Math.max(rect.width, rect.right - inner.left)),
                      client: Math.ceil(Math.min(inner.width, page.clientWidth - inner.left)),
                      src: (img.getAttribute('src') || '').slice(0, 60)});
    });
    var content = document.querySelector('.bd-main') || document.body;
    content.querySelectorAll('*').forEach(function (e) {
      if (counted.has(e) || e.closest('mjx-container') || e.scrollWidth <= e.clientWidth + 1) return;
      var x = getComputedStyle(e).overflowX;
      if (x === 'auto' || x === 'scroll')
        out.other.push({scroll: e.scrollWidth, client: e.clientWidth, what: label(e),
                        text: e.textContent.trim().replace(/\s+/g, ' ').slice(0, 50)});
    });
    var probe = document.querySelector('div.cell_input pre');
    if (probe) {
      var span = document.createElement('span'); span.textContent = 'x'.repeat(200);
      probe.appendChild(span);
      var style = getComputedStyle(probe);
      var inner = probe.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      out.chars = Math.floor(inner / (span.getBoundingClientRect().width / 200));
      out.font = parseFloat(style.fontSize);
      probe.removeChild(span);
    }
    var items = (window.MathJax && MathJax.startup && MathJax.startup.document) ?
                Array.from(MathJax.startup.document.math) : [];
    items.filter(function (i) { return i.display && i.typesetRoot; }).forEach(function (i) {
      var m = i.typesetRoot, math = m.querySelector('mjx-math');
      out.display.push({scroll: Math.max(m.scrollWidth, math ? Math.ceil(math.getBoundingClientRect().width) : 0),
                        client: m.clientWidth, tex: i.math.trim().slice(0, 70)});
    });
    items.filter(function (i) { return !i.display && i.typesetRoot; }).forEach(function (i) {
      var m = i.typesetRoot, box = m.closest('p, li, dd, dt, td, th, figcaption, div');
      if (!box || m.closest('table')) return;                      // a table is measured as a whole
      var outer = box.getBoundingClientRect(), rect = m.getBoundingClientRect();
      out.inline.push({scroll: Math.ceil(rect.right - outer.left), client: Math.floor(outer.width),
                       tex: i.math.trim().slice(0, 70)});
    });
    var result = document.createElement('script');
    result.type = 'application/json'; result.id = 'ldpbook-layout';
    result.textContent = JSON.stringify(out).replace(/</g, '\\u003c');
    document.body.appendChild(result);
  }
  window.addEventListener('load', function () {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) MathJax.startup.promise.then(measure, measure);
    else measure();
  });
})();
"""
LAYOUT_RESULT = re.compile(r"<script type=\"application/json\" id=\"ldpbook-layout\">(.*?)</script>", re.S)


def with_measurement(page: Path, page_html: str) -> str:
    "A copy of a page that resolves its links against the original folder and measures its layout when loaded."
    base = f'<base href="{page.resolve().parent.as_uri()}/">'
    page_html = re.sub(r"<head\b[^>]*>", lambda m: m.group(0) + base, page_html, count=1)
    return page_html.replace("</body>", f"<script>{MEASURE_JS}</script></body>", 1)


def layout_of(dom: str) -> dict:
    match = LAYOUT_RESULT.search(dom)
    if not match:
        raise ValueError("the page did not report its layout (did its scripts run?)")
    return json.loads(match.group(1))


def overflows(layout: dict) -> tuple:
    "(code blocks, display equations, tables) of a measured page that need horizontal scrolling (1 px of tolerance)."
    return tuple([x for x in layout[kind] if x["scroll"] > x["client"] + 1]
                 for kind in ("code", "display", "table"))


def further_overflows(layout: dict) -> tuple:
    """(API signatures, images, other scrolling boxes, inline formulas, the page itself) of a measured page that are
    wider than their room: a signature, an image or an inline formula that runs past its box (a formula in the
    prose cannot wrap inside itself), any other box that scrolls sideways, a page wider than the window."""
    found = tuple([x for x in layout.get(kind, []) if x["scroll"] > x["client"] + 1]
                  for kind in ("signature", "image", "other", "inline"))
    page = layout.get("page", {"scroll": 0, "client": 0})
    return found + ([page] if page["scroll"] > page["client"] + 1 else [],)


SELF_TEST_PAGE = """<html><head><meta charset="utf-8"><script defer src="{mathjax}"></script></head><body>
<div style="width: 600px; font-size: 16px">
<div class="cell"><div class="cell_input"><pre style="overflow: auto">short = 1</pre></div>
<div class="cell_output"><pre style="overflow: auto">{long}</pre></div></div>
<div class="highlight"><pre style="overflow: auto">make test   # short</pre></div>
<div class="highlight"><pre style="overflow: auto">{long}</pre></div>
<div class="highlight"><pre style="overflow: auto; white-space: pre-wrap">{long}</pre></div>
<div class="math">\\[a + b = c\\]</div>
<div class="math">\\[{wide}\\]</div>
<div><table><tr><th>narrow</th><td>a b c</td></tr></table></div>
<div><table><tr><th>wide</th><td><code style="white-space: nowrap">{long}</code></td></tr></table></div>
<dl class="py function"><dt class="sig" id="short_signature">f(x)</dt></dl>
<dl class="py function"><dt class="sig" id="long_signature"><span style="white-space: nowrap">{long}</span></dt></dl>
<p><img src="{image}" style="width: 300px" alt="narrow"></p>
<p><img src="{image}" style="width: 900px" alt="wide"></p>
<div style="overflow-x: auto"><span style="white-space: nowrap">{long}</span></div>
<p>```{{prf:theorem}} Chernoff
:label: ch-thm</p>
<p>see {{ref}}<code>x</code>; of $e_\\gamma$-divergence</p>
<p>typeset: <span class="math">\\(e_\\gamma\\)</span>, and a price of $5 or $10.</p>
<p>inline: <span class="math">\\({wide}\\)</span></p>
</div>
<div style="position: absolute; left: 1500px; width: 100px">off the window</div>
</body></html>"""
SELF_TEST_IMAGE = "data:image/svg+xml;utf8,<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'/>"


def self_test(chromium: str, site: Path):
    """On a saved page 600 px wide, the layout measurement must find exactly the code blocks (a cell output and a
    block of the prose), the display equation, the table, the API signature, the image and the scrolling box that
    are too wide, and the page that is wider than the window, and pass the short and narrow ones and a long line that
    wraps; and the prose must show its unparsed MyST (a directive fence, an option line, a role, TeX between
    dollars) and nothing else. Exit if it does not."""
    mathjax = (site / "_static" / "mathjax" / "tex-mml-chtml.js").resolve()
    wide = " + ".join(f"x_{{{i}}}^{{2}}" for i in range(40))
    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "self_test.html"
        page_html = SELF_TEST_PAGE.format(mathjax=mathjax.as_uri(), long="y = " + "1 + " * 60 + "1", wide=wide,
                                          image=html.escape(SELF_TEST_IMAGE))
        page.write_text(page_html, encoding="utf-8")
        layout = layout_of(render(chromium, page))
    code, display, table = overflows(layout)
    signature, image, other, inline, whole = further_overflows(layout)
    myst = unparsed_myst_in(page_html)
    if [c["kind"] for c in code] != ["output", "block"] or len(display) != 1 or len(layout["display"]) != 2 \
            or not display[0]["tex"].startswith("x_{0}") or [t["head"] for t in table] != ["wide"] \
            or [c["wrapped"] for c in layout["code"]] != [False, False, False, False, True] \
            or [s["name"] for s in signature] != ["long_signature"] or len(layout["signature"]) != 2 \
            or len(image) != 1 or len(layout["image"]) != 2 or image[0]["scroll"] < 900 \
            or [o["what"] for o in other] != ["div"] or len(whole) != 1 \
            or len(inline) != 1 or not inline[0]["tex"].startswith("x_{0}") or len(layout["inline"]) != 2 \
            or len(myst) != 4 or not all(m in found for m, found in zip(("```{prf:theorem}", ":label:", "{ref}",
                                                                          "$e_\\gamma$"), myst)):
        sys.exit(f"check_site: the self-test failed: {layout}, unparsed MyST {myst}")
    return ("self-test: in a 600-px column a 245-character line (a cell's output, a prose block, a table, an API "
            "signature, a scrolling box), a 40-term display and inline formula, a 900-px image and a page wider than "
            "the window are caught, a wrapped line is counted, the short ones pass; a directive fence, an option line, a role and "
            "TeX between dollars are found in the prose")


def toc_files(toc: dict) -> list:
    "The files of a jupyter-book table of contents (the contents of _toc.yml), root first, in reading order."
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("chapters"))
            walk(entry.get("sections"))

    for part in toc.get("parts") or []:
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    walk(toc.get("sections"))
    return files


def toc_pages(root: Path, site: Path) -> list:
    "The built page of every file in the book's _toc.yml; exit if one is missing."
    import yaml
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    pages = [site / (re.sub(r"\.(?:md|ipynb|rst)$", "", name) + ".html") for name in toc_files(toc)]
    missing = [str(page.relative_to(site)) for page in pages if not page.is_file()]
    if missing:
        sys.exit(f"check_site: {len(missing)} page(s) of _toc.yml not built: {', '.join(missing)}")
    return pages


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("check_site: Chromium is not installed; install it with `apt-get install -y chromium` (as root).")


def external_assets(site: Path):
    "Every (page, url) where a built page loads a script, stylesheet, image or frame from another host."
    found = []
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8", errors="replace")
        found += [(page, m.group(0)) for m in EXTERNAL_ASSET.finditer(text)]
        found += [(page, m.group(0)) for m in CDN_HOSTS.finditer(text)]
    return found


def render(chromium: str, page: Path) -> str:
    """The DOM of a page after its scripts ran, in a 1366-px-wide window, with its layout measured (see
    MEASURE_JS): the page is copied with the measuring script into a temporary folder and loaded from there."""
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / page.name
        copy.write_text(with_measurement(page, page.read_text(encoding="utf-8")), encoding="utf-8")
        result = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--window-size={WINDOW[0]},{WINDOW[1]}",
                                 f"--user-data-dir={folder}/profile", copy.as_uri()],
                                capture_output=True, text=True, timeout=180)
    if result.returncode != 0 or "<html" not in result.stdout:
        sys.exit(f"check_site: Chromium failed on {page}: {result.stderr.strip()[-500:]}")
    return result.stdout


NOT_PROSE = re.compile(r"<(mjx-container|script|style|pre|code|textarea)\b.*?</\1>", re.S | re.I)
RAW_TEX = re.compile(r"\$\$|\\\(|\\\[|\\begin\{")


def raw_tex_left(dom: str) -> list:
    "Pieces of TeX that were not typeset: $$, \\( , \\[ or \\begin{ in the visible prose of a rendered page."
    text = html.unescape(re.sub(r"<[^>]+>", " ", NOT_PROSE.sub(" ", dom)))
    return [text[max(m.start() - 30, 0):m.end() + 30].strip() for m in RAW_TEX.finditer(text)]


def check_math(page: Path, dom: str) -> str:
    "One rendered page's math: a one-line report, or exit with the reason it failed."
    expected = len(MATH_ELEMENT.findall(page.read_text(encoding="utf-8")))
    typeset = dom.count("<mjx-container")
    errors = dom.count("<mjx-merror")
    if typeset < expected or errors:
        sys.exit(f"check_site: {page}: {typeset} typeset formulas for {expected} math elements, {errors} MathJax errors")
    leftovers = raw_tex_left(dom)
    if leftovers:
        sys.exit(f"check_site: {page}: {len(leftovers)} piece(s) of untypeset TeX in the prose, e.g. {leftovers[0]!r}")
    return f"{typeset} formulas typeset offline, no MathJax errors"


def layout_problems(page: Path, dom: str) -> tuple:
    "(one-line report, problems) of a rendered page's layout at the window's width."
    layout = layout_of(dom)
    code, display, table = overflows(layout)
    problems = [f"{page.name}: code block ({c['kind']}) {c['scroll']} px wide in {c['client']} px, longest line "
                f"{len(c['line'])} characters: {c['line'][:60]!r}" for c in code]
    problems += [f"{page.name}: display equation {d['scroll']} px wide in {d['client']} px: {d['tex']!r}"
                 for d in display]
    problems += [f"{page.name}: table {t['scroll']} px wide in {t['client']} px, headed {t['head']!r}" for t in table]
    signature, image, other, inline, whole = further_overflows(layout)
    problems += [f"{page.name}: API signature {s['scroll']} px wide in {s['client']} px: {s['name']!r}"
                 for s in signature]
    problems += [f"{page.name}: image {i['scroll']} px wide in {i['client']} px: {i['src']!r}" for i in image]
    problems += [f"{page.name}: {o['what']} scrolls sideways ({o['scroll']} px in {o['client']} px): {o['text']!r}"
                 for o in other]
    problems += [f"{page.name}: inline formula {m['scroll']} px wide in {m['client']} px: {m['tex']!r}"
                 for m in inline]
    problems += [f"{page.name}: the page is {w['scroll']} px wide in a {w['client']}-px window" for w in whole]
    extra = "".join(f", {len(layout[kind]) - len(bad)}/{len(layout[kind])} {name}"
                    for kind, bad, name in (("signature", signature, "API signatures"), ("image", image, "images"))
                    if layout[kind])
    wrapped = sum(1 for c in layout["code"] if c.get("wrapped"))
    report = (f"{len(layout['code']) - len(code)}/{len(layout['code'])} code blocks"
              + (f" ({wrapped} of the prose's wrap a line)" if wrapped else "") + ", "
              f"{len(layout['display']) - len(display)}/{len(layout['display'])} display equations{extra} and "
              f"{len(layout['table']) - len(table)}/{len(layout['table'])} tables fit "
              f"at {WINDOW[0]} px" + (f" ({layout['chars']} characters of {layout['font']:g}-px code)"
                                      if layout["chars"] else ""))
    return report, problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", nargs="?", default="_build/html")
    parser.add_argument("--root", default=".", help="the book's source folder (settings.ini, ldpbook/)")
    parser.add_argument("--pages", nargs="*",
                        help="pages (relative to the site) to render; default: every page of the table of contents")
    parser.add_argument("--jobs", type=int, default=2, help="pages rendered at once (default 2)")
    parser.add_argument("--layout", choices=("check", "report"), default="check",
                        help="report: list the blocks that need horizontal scrolling without failing")
    args = parser.parse_args()
    site = Path(args.site)
    if not (site / "index.html").exists():
        sys.exit(f"check_site: no built site at {site} (run `make book` first)")
    leaks = external_assets(site)
    if leaks:
        page, url = leaks[0]
        sys.exit(f"check_site: {page} loads an external asset ({url}); {len(leaks)} such references in all")
    root = Path(args.root)
    for name, problems in (("a missing or empty image", broken_images(site)), ("a broken link", broken_links(site)),
                           ("a rendered nbdev directive or nbval marker", build_markers(site)),
                           ("a hide-input cell shown open", open_hidden_inputs(site)),
                           ("a placeholder or launch link for no configured repository", dishonest_links(site, root)),
                           ("a chapter page without its notebook download", missing_downloads(site)),
                           ("unparsed MyST shown as text", unparsed_myst(site)),
                           ("TeX shown in a page title, sidebar entry or previous/next link", tex_in_titles(site))):
        if problems:
            listed = "; ".join(f"{page.relative_to(site)}: {ref}" for page, ref in problems[:5])
            sys.exit(f"check_site: {len(problems)} case(s) of {name}: {listed}")
    problems = api_problems(site, root)
    if problems:
        sys.exit(f"check_site: the API reference is incomplete ({len(problems)} problem(s)): " + "; ".join(problems[:5]))
    pages = [site / p for p in args.pages] if args.pages else toc_pages(root, site)
    if not any(MATH_ELEMENT.search(p.read_text(encoding="utf-8")) for p in pages):
        sys.exit("check_site: no chapter page with math found")
    chromium = find_chromium()
    print(self_test(chromium, site))
    layout = []
    with ThreadPoolExecutor(max_workers=max(args.jobs, 1)) as pool:       # one Chromium per page, `jobs` at once
        doms = pool.map(lambda page: render(chromium, page), pages)
        rendered = list(zip(pages, doms))
    for page, dom in rendered:
        math = check_math(page, dom) if MATH_ELEMENT.search(page.read_text(encoding="utf-8")) else "no math"
        report, problems = layout_problems(page, dom)
        print(f"{page.relative_to(site)}: {math}; {report}")
        layout += problems
    if layout and args.layout == "report":
        print(f"check_site: {len(layout)} block(s) need horizontal scrolling at {WINDOW[0]} px (not failing: "
              f"--layout report):\n  " + "\n  ".join(layout))
    elif layout:
        sys.exit(f"check_site: {len(layout)} block(s) need horizontal scrolling at {WINDOW[0]} px:\n  "
                 + "\n  ".join(layout))
    print(f"check_site: {len(pages)} page(s) render their math offline and fit a {WINDOW[0]}-px window; no unparsed "
          f"MyST, external assets, missing images, broken internal links, build markers, open hide-input cells, "
          f"TeX in titles or placeholder links in {site}; the API reference covers every module and links back to "
          f"the chapters")


if __name__ == "__main__":
    main()

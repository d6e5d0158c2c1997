"""Check the built site: math is typeset offline by the vendored MathJax, no page loads anything from a CDN,
every image is present and non-empty, no internal link is broken, no build marker is rendered, the API reference
is complete and linked, and no link points at a placeholder repository.

Usage: python tools/check_site.py [_build/html] [--pages nbs/00_foundations.html ...]

For every page named (default: every chapter page under nbs/ that contains math) headless Chromium renders the
file with the network closed off, and the DOM it dumps must hold one <mjx-container> per math element of the page
and no <mjx-merror>. Every built page is also scanned for external script or stylesheet URLs, for images that are
missing or empty, and for links to pages or anchors that do not exist; for code lines that are nbdev directives
(`#| export`) or nbval markers (`# NBVAL_IGNORE_OUTPUT`); for cells tagged `hide-input` that are not collapsed;
for an API reference (nbs/api.html) that lacks a section for a module of the package, an entry of a module's
`__all__`, or an entry's link back to its chapter; and for links to a placeholder or to launch services
(Binder, Colab) when settings.ini names no repository. Every chapter page must offer its notebook for download.
"""
import argparse
import base64
import configparser
import importlib
import html
import re
import shutil
import subprocess
import sys
import tempfile
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
    with tempfile.TemporaryDirectory() as profile:
        result = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", page.resolve().as_uri()],
                                capture_output=True, text=True, timeout=120)
    if result.returncode != 0 or "<html" not in result.stdout:
        sys.exit(f"check_site: Chromium failed on {page}: {result.stderr.strip()[-500:]}")
    return result.stdout


NOT_PROSE = re.compile(r"<(mjx-container|script|style|pre|code|textarea)\b.*?</\1>", re.S | re.I)
RAW_TEX = re.compile(r"\$\$|\\\(|\\\[|\\begin\{")


def raw_tex_left(dom: str) -> list:
    "Pieces of TeX that were not typeset: $$, \\( , \\[ or \\begin{ in the visible prose of a rendered page."
    text = html.unescape(re.sub(r"<[^>]+>", " ", NOT_PROSE.sub(" ", dom)))
    return [text[max(m.start() - 30, 0):m.end() + 30].strip() for m in RAW_TEX.finditer(text)]


def check_math(chromium: str, page: Path) -> str:
    "Render one page; return a one-line report or exit with the reason it failed."
    expected = len(MATH_ELEMENT.findall(page.read_text(encoding="utf-8")))
    dom = render(chromium, page)
    typeset = dom.count("<mjx-container")
    errors = dom.count("<mjx-merror")
    if typeset == 0 or typeset < expected or errors:
        sys.exit(f"check_site: {page}: {typeset} typeset formulas for {expected} math elements, {errors} MathJax errors")
    leftovers = raw_tex_left(dom)
    if leftovers:
        sys.exit(f"check_site: {page}: {len(leftovers)} piece(s) of untypeset TeX in the prose, e.g. {leftovers[0]!r}")
    return f"{page}: {typeset} formulas typeset offline, no MathJax errors"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", nargs="?", default="_build/html")
    parser.add_argument("--root", default=".", help="the book's source folder (settings.ini, ldpbook/)")
    parser.add_argument("--pages", nargs="*", help="pages (relative to the site) to render; default: chapters with math")
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
                           ("a chapter page without its notebook download", missing_downloads(site))):
        if problems:
            listed = "; ".join(f"{page.relative_to(site)}: {ref}" for page, ref in problems[:5])
            sys.exit(f"check_site: {len(problems)} case(s) of {name}: {listed}")
    problems = api_problems(site, root)
    if problems:
        sys.exit(f"check_site: the API reference is incomplete ({len(problems)} problem(s)): " + "; ".join(problems[:5]))
    pages = [site / p for p in args.pages] if args.pages else sorted(
        p for p in (site / "nbs").glob("[0-9]*.html") if MATH_ELEMENT.search(p.read_text(encoding="utf-8")))
    if not pages:
        sys.exit("check_site: no chapter page with math found")
    chromium = find_chromium()
    for page in pages:
        print(check_math(chromium, page))
    print(f"check_site: {len(pages)} page(s) render their math offline; no external assets, missing images, "
          f"broken internal links, build markers, open hide-input cells or placeholder links in {site}; "
          f"the API reference covers every module and links back to the chapters")


if __name__ == "__main__":
    main()

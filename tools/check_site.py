"""Check the built site: math is typeset offline by the vendored MathJax, no page loads anything from a CDN,
every image is present and non-empty, and no internal link is broken.

Usage: python tools/check_site.py [_build/html] [--pages nbs/00_foundations.html ...]

For every page named (default: every chapter page under nbs/ that contains math) headless Chromium renders the
file with the network closed off, and the DOM it dumps must hold one <mjx-container> per math element of the page
and no <mjx-merror>. Every built page is also scanned for external script or stylesheet URLs, for images that are
missing or empty, and for links to pages or anchors that do not exist.
"""
import argparse
import base64
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
    parser.add_argument("--pages", nargs="*", help="pages (relative to the site) to render; default: chapters with math")
    args = parser.parse_args()
    site = Path(args.site)
    if not (site / "index.html").exists():
        sys.exit(f"check_site: no built site at {site} (run `make book` first)")
    leaks = external_assets(site)
    if leaks:
        page, url = leaks[0]
        sys.exit(f"check_site: {page} loads an external asset ({url}); {len(leaks)} such references in all")
    for name, problems in (("a missing or empty image", broken_images(site)), ("a broken link", broken_links(site))):
        if problems:
            listed = "; ".join(f"{page.relative_to(site)}: {ref}" for page, ref in problems[:5])
            sys.exit(f"check_site: {len(problems)} reference(s) to {name}: {listed}")
    pages = [site / p for p in args.pages] if args.pages else sorted(
        p for p in (site / "nbs").glob("[0-9]*.html") if MATH_ELEMENT.search(p.read_text(encoding="utf-8")))
    if not pages:
        sys.exit("check_site: no chapter page with math found")
    chromium = find_chromium()
    for page in pages:
        print(check_math(chromium, page))
    print(f"check_site: {len(pages)} page(s) render their math offline; no external assets, missing images "
          f"or broken internal links in {site}")


if __name__ == "__main__":
    main()

"""Sphinx extension for the ldpbook site (registered in `_config.yml` under `sphinx: local_extensions`).

The chapter notebooks are the source of the package and of the tests, so they carry build markers that a reader
should not see. This extension works on the rendered pages only; the notebooks are never changed.

1. **Clean code cells.** nbdev directives (`#| default_exp`, `#| export`, `#| hide`, ...) at the top of a code
   cell and nbval markers (`# NBVAL_IGNORE_OUTPUT`, ...) anywhere in it are removed from the rendered input.
   nbdev's display directives keep their meaning: `#| hide` removes the cell, `#| echo: false` its input,
   `#| output: false` its output. A cell left with no code and no output disappears. A cell with a line longer
   than the text column shows (source or text output) gets the classes `full-width ldpbook-wide`: on a wide
   screen it also takes the table-of-contents column (assets/ldpbook.css). A docstring of more than one paragraph
   is folded after its first paragraph (a <details> on the HTML pages; the API reference keeps it whole), and
   an export cell that defines only private helpers (names starting with `_`: validation, floating-point
   plumbing, engines) is folded whole, so that the reading flow shows the code that carries the mathematics.
2. **API reference.** The page that holds a fenced `{ldpbook-api-reference}` block gets, in its place, one
   section per module of the package (found in nbdev's `_modidx.py`, in chapter order) with autodoc entries for
   the module's `__all__`; every entry links back to the chapter section whose export cell defines it.
3. **Cross-links.** Inline code in the prose that names an API member (`divergence_optimal`,
   `divergence_optimal(p, q, eps)`, `spr.divergence_optimal`, `SPRMechanism.sample`) becomes a link to its entry.
4. **Honest repository links.** The repository URL lives in one place, `git_url` in settings.ini. When it names a
   repository (``https://host/owner/name``), the pages get the repository button and the launch buttons
   (Binder, Colab) configured in `_config.yml`; when it is empty, they get none. The download button stays.
5. **The PDF numbers results as the site does.** Theorems, lemmas, definitions and exercises (sphinx-proof,
   sphinx-exercise) take their numbers from Sphinx's figure numbering, "chapter.n" on the site. For the LaTeX
   build, sphinx-jupyterbook-latex turns the parts of `_toc.yml` into LaTeX parts and sets `numfig_secnum_depth`
   to 2, so that the LaTeX writer (which counts the part level) numbers figures and equations "chapter.n"; but
   Sphinx's own numbers then get the section too ("Theorem 2.3.1" for the site's "Theorem 2.1"). The site's
   depth is kept while Sphinx assigns the numbers and 2 is given back to the LaTeX writer. A proof box gets the
   title "Proof" in the PDF (sphinx-proof gives it none there: an empty title bar).
6. **Chapter numbers come from the table of contents.** The chapters are the pages of the numbered part of
   `_toc.yml`, numbered 1, 2, ... on the site and in the PDF (the notebooks' file numbers start at 00). The title
   of each chapter gets the label `chapter-<name>`, its file name without the number (`nbs/01_spr` →
   `chapter-spr`), so that prose writes {numref}`chapter %s <chapter-spr>` and the reader sees "chapter 2", on the
   site and in the PDF, wherever the chapter moves. tools/lint_chapter_refs.py fails on a chapter number written
   by hand. The exercises of the unnumbered pages (the appendices) are numbered 1, 2, ... within their page (Sphinx
   would count them on across all those pages).
7. **The PDF has front matter, chapters, appendices and back matter.** Each part of `_toc.yml` is a LaTeX part
   (sphinx-jupyterbook-latex); `ldpbook_latex_matter` in `_config.yml` says which kind each part is. The pages of
   the front and back matter (the notation, the references) are unnumbered chapters, the chapters are numbered
   1, 2, ... as on the site, and the appendices are lettered (Appendix A, B, ...), not chapters 9, 10, ....
8. **Page titles with math read as text in the navigation.** A chapter title may carry inline math (`# The
   $E_\\gamma$ closed form`): the page heading typesets it, but the sidebar, the browser tab, the previous/next
   links and the search results show a page's title as text, where TeX would be seen raw ("E_\\gamma"). The title
   they use (Sphinx's `env.titles` and the page's entry in `env.tocs`) gets the formula as Unicode with real
   sub- and superscripts ("E<sub>γ</sub>"); the PDF's chapter heading and contents keep the typeset formula and its
   bookmarks the Unicode text. A formula with TeX this cannot write as Unicode fails the build.
9. **A chapter reference reads its page once.** Sphinx 7.4 resolves each {numref} by unpickling the whole doctree
   of the page it points to, and the book's two hundred chapter references took half of the site's build time
   that way. The lookup only reads the target (its node type and ids), so during the writing of the pages it gets
   one unpickled copy of each page: the same numbers and links.
"""
from __future__ import annotations

import ast
import configparser
import importlib
import json
import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)

# ---------------------------------------------------------------------------------------------------------------
# 1. Clean code cells

DIRECTIVE = re.compile(r"^\s*#\s*\|\s*(?P<name>[\w-]+)\s*:?\s*(?P<value>.*?)\s*$")
NBVAL_MARKER = re.compile(r"^\s*#+\s*(?:NBVAL_\w+|PYTEST_VALIDATE_IGNORE_OUTPUT)\s*$")
EXPORT_DIRECTIVES = {"export", "exports", "exporti"}


def split_directives(source: str):
    """The nbdev directives at the top of a cell (a dict name -> value) and the code a reader sees.

    Directives are read, as nbdev reads them, from the leading comment lines of the cell; nbval markers are
    comment lines anywhere. Blank lines left at either end are dropped."""
    lines = source.splitlines()
    directives, start = {}, 0
    while start < len(lines):
        match = DIRECTIVE.match(lines[start])
        if match:
            directives[match["name"]] = match["value"]
        elif not (NBVAL_MARKER.match(lines[start]) or not lines[start].strip()):
            break
        start += 1
    body = [line for line in lines[start:] if not NBVAL_MARKER.match(line)]
    return directives, "\n".join(body).strip("\n")


def _is(node, element):
    return isinstance(node, nodes.container) and node.get("nb_element") == element


def top_level_names(code: str) -> list:
    "The names a code cell defines at top level (functions, classes, assignments), or [] if it does not parse."
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    names = []
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(statement.name)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names += [t.id for t in targets if isinstance(t, ast.Name)]
    return names


def _section_of(node):
    "The innermost section around a node: (anchor id, title text), or (None, None) at the top of a page."
    while node is not None and not isinstance(node, nodes.section):
        node = node.parent
    if node is None or not node["ids"]:
        return None, None
    title = node[0].astext() if node.children and isinstance(node[0], nodes.title) else ""
    return node["ids"][0], title


class CleanNotebookCells(SphinxTransform):
    """Strip build markers from rendered code cells and record where each exported name is defined."""

    default_priority = 400

    def apply(self, **kwargs):
        env, docname = self.env, self.env.docname
        module = _chapter_module(self.app, docname)
        if module:
            env.ldpbook_chapters[f"ldpbook.{module}"] = docname
        cells = [n for n in self.document.findall(nodes.container) if _is(n, "cell_code")]
        for cell in cells:
            source_box = next((c for c in cell.children if _is(c, "cell_code_source")), None)
            block = next(iter(source_box.findall(nodes.literal_block)), None) if source_box else None
            if block is None:
                continue
            directives, code = split_directives(block.astext())
            names = top_level_names(code)
            if EXPORT_DIRECTIVES & directives.keys() and module:
                target = directives[next(iter(EXPORT_DIRECTIVES & directives.keys()))].split()
                anchor, title = _section_of(cell)
                for name in names:
                    env.ldpbook_defs[f"ldpbook.{target[0] if target else module}.{name}"] = (docname, anchor, title)
            if code != block.astext():
                block.children = [nodes.Text(code)]
                block.rawsource = code
            pieces = docstring_folds(code)
            if len(pieces) > 1:
                block.replace_self(_folded_blocks(block, pieces))
            if (EXPORT_DIRECTIVES & directives.keys() and names and all(n.startswith("_") for n in names)
                    and "hide" not in directives and directives.get("echo", "").lower() != "false"
                    and "tag_hide-input" not in cell.get("classes", [])):
                listed = ", ".join(names[:3]) + (", …" if len(names) > 3 else "")
                source_box.insert(0, nodes.raw("", f'<details class="ldpbook-helper"><summary>helper code: {listed}'
                                                   f'</summary>', format="html"))
                source_box.append(nodes.raw("", "</details>", format="html"))
            hide = "hide" in directives
            if not code.strip() or directives.get("echo", "").lower() == "false":
                cell.remove(source_box)
            if directives.get("output", "").lower() == "false":
                for box in [c for c in cell.children if _is(c, "cell_code_output")]:
                    cell.remove(box)
            if hide or not cell.children:
                cell.parent.remove(cell)
            elif longest_line(cell) > TEXT_COLUMN_CHARACTERS:
                cell["classes"] += ["full-width", "ldpbook-wide"]


# Long docstrings are folded after their first paragraph: the rest (parameters, returns, details) is one click away,
# and the API reference shows the whole docstring. Only a rest of at least FOLD_MIN_LINES lines is folded.
FOLD_MIN_LINES = 4


def docstring_folds(code: str) -> list:
    """The code split around the folded parts of its docstrings: [(text, folded), ...] in order, where `folded` is
    True for the lines of a docstring after its first paragraph (through the closing quotes). [(code, False)] when
    nothing is folded (no docstring of more than one paragraph, or code that does not parse)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return [(code, False)]
    lines, cuts = code.splitlines(), []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not node.body:
            continue
        first = node.body[0]
        if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)):
            continue
        start, end = first.lineno - 1, first.end_lineno            # the docstring's lines: [start, end)
        blank = next((i for i in range(start + 1, end) if not lines[i].strip()), None)
        if blank is not None and end - blank >= FOLD_MIN_LINES:
            cuts.append((blank, end))
    if not cuts:
        return [(code, False)]
    pieces, position = [], 0
    for blank, end in sorted(cuts):
        pieces += [("\n".join(lines[position:blank]), False), ("\n".join(lines[blank:end]), True)]
        position = end
    if position < len(lines):
        pieces.append(("\n".join(lines[position:]), False))
    return [(text, folded) for text, folded in pieces if text.strip() or folded]


def _folded_blocks(block, pieces) -> list:
    "The literal blocks of a folded cell source; each folded piece inside a <details> (HTML only)."
    result = []
    for text, folded in pieces:
        piece = nodes.literal_block(text, text, language="none" if folded else block.get("language", "python"),
                                    classes=list(block.get("classes", [])))
        if folded:
            count = len(text.strip("\n").splitlines())
            result += [nodes.raw("", f'<details class="ldpbook-docstring"><summary>docstring: {count} more lines '
                                     f'(parameters, returns, details; also in the API reference)</summary>',
                                 format="html"),
                       piece, nodes.raw("", "</details>", format="html")]
        else:
            result.append(piece)
    return result


# A code cell whose longest line (source or text output) is longer than this takes the extra width of the
# table-of-contents column (assets/ldpbook.css): 13-px code shows about 90 characters in the text column at 1366 px.
TEXT_COLUMN_CHARACTERS = 88


def longest_line(cell) -> int:
    "The length of the longest line of a rendered code cell: its source and its text outputs."
    return max((len(line) for block in cell.findall(nodes.literal_block) for line in block.astext().splitlines()),
               default=0)


def _chapter_module(app, docname):
    "The module (without `ldpbook.`) that a chapter page's notebook exports, from its `#| default_exp`, or None."
    if not hasattr(app, "ldpbook_chapter_of"):
        app.ldpbook_chapter_of = {path.with_suffix("").as_posix(): module.split(".", 1)[1]
                                  for module, path in chapter_notebooks(Path(app.srcdir)).items()}
    return app.ldpbook_chapter_of.get(docname)


def _purge(app, env, docname):
    for store in ("ldpbook_defs", "ldpbook_chapters"):
        table = getattr(env, store, {})
        for key in [k for k, v in table.items() if (v[0] if isinstance(v, tuple) else v) == docname]:
            del table[key]


def _merge(app, env, docnames, other):
    for store in ("ldpbook_defs", "ldpbook_chapters"):
        getattr(env, store).update({k: v for k, v in getattr(other, store, {}).items()})


def _init_env(app, env, docnames):
    for store in ("ldpbook_defs", "ldpbook_chapters"):
        if not hasattr(env, store):
            setattr(env, store, {})


# ---------------------------------------------------------------------------------------------------------------
# 2. The API reference page

API_BLOCK = re.compile(r"^```\{ldpbook-api-reference\}[^\n]*\n```[ \t]*$", re.M)


def chapter_notebooks(root: Path) -> dict:
    "Module name -> chapter notebook (path relative to the book root), read from each notebook's `#| default_exp`."
    found = {}
    for path in sorted((root / "nbs").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8")).get("cells", []):
            if cell.get("cell_type") == "code":
                directives, _ = split_directives("".join(cell.get("source", "")))
                if directives.get("default_exp"):
                    found[f"ldpbook.{directives['default_exp'].split()[0]}"] = path.relative_to(root)
                    break
    return found


def api_modules(root: Path) -> list:
    "The package's modules, from nbdev's index `ldpbook/_modidx.py`, in chapter order (modules without a chapter last)."
    index = importlib.import_module("ldpbook._modidx")
    chapters = chapter_notebooks(root)
    modules = [m for m in index.d["syms"] if not m.rsplit(".", 1)[-1].startswith("_")]
    return sorted(modules, key=lambda m: (str(chapters.get(m, "~")), m))


def api_members(module_name: str) -> list:
    "The public API of a module: its `__all__` (nbdev writes it from the exported cells)."
    module = importlib.import_module(module_name)
    return [name for name in getattr(module, "__all__", []) if not name.startswith("_")]


def api_markdown(root: Path) -> str:
    "The generated MyST source of the API reference: one section per module, autodoc entries for its members."
    chapters, parts = chapter_notebooks(root), []
    for module in api_modules(root):
        members = api_members(module)
        if not members:
            continue
        parts.append(f"(api-{module.replace('.', '-')})=\n## `{module}`\n")
        chapter = chapters.get(module)
        if chapter is not None:
            parts.append(f"Explained in {{doc}}`/{chapter.with_suffix('').as_posix()}`.\n")
        imported = importlib.import_module(module)
        data = [name for name in members if not callable(getattr(imported, name, None))]
        parts.append("```{eval-rst}\n"
                     f".. automodule:: {module}\n"
                     "   :members:\n"
                     "   :undoc-members:\n"
                     "   :member-order: bysource\n"
                     + (f"   :exclude-members: {', '.join(data)}\n" if data else "")
                     + "".join(f"\n.. autodata:: {module}.{name}\n" for name in data)   # constants
                     + "```\n")
    return "\n".join(parts)


def _api_source(app, docname, source):
    if API_BLOCK.search(source[0]):
        generated = api_markdown(Path(app.srcdir))
        source[0] = API_BLOCK.sub(lambda _: generated, source[0])
        app.env.ldpbook_api_page = docname


def _api_index(app):
    "Every documented name -> its qualified name, for the cross-links (short, module-qualified and full forms)."
    index = {}
    for module in api_modules(Path(app.srcdir)):
        short_module = module.rsplit(".", 1)[-1]
        imported = importlib.import_module(module)
        for name in api_members(module):
            qualified = f"{module}.{name}"
            for key in (name, f"{short_module}.{name}", qualified):
                index.setdefault(key, set()).add(qualified)
            obj = getattr(imported, name, None)
            if isinstance(obj, type):
                for attr, value in vars(obj).items():
                    if not attr.startswith("_") and (callable(value) or isinstance(value, (property, classmethod,
                                                                                           staticmethod))):
                        for key in (f"{name}.{attr}", f"{short_module}.{name}.{attr}", f"{qualified}.{attr}"):
                            index.setdefault(key, set()).add(f"{qualified}.{attr}")
        index.setdefault(module, set()).add(module)
    return index


def _chapter_from_modidx(env, qualified):
    """The chapter page of a name from nbdev's index (`'ldpbook.m.f': ('spr.html#f', ...)` names the notebook
    without its number), for names exported into a module other than their notebook's `default_exp`."""
    index = importlib.import_module("ldpbook._modidx").d["syms"]
    entry = index.get(qualified.rsplit(".", 1)[0], {}).get(qualified)
    if not entry:
        return None
    stem = entry[0].split(".html")[0]
    return next((d for d in sorted(env.found_docs) if re.sub(r"^\d+_", "", d.rsplit("/", 1)[-1]) == stem), None)


def _add_back_links(app, doctree, docname):
    "On the API page: under each entry, a link to the chapter section whose export cell defines it."
    if docname != getattr(app.env, "ldpbook_api_page", None):
        return
    env = app.env
    for desc in list(doctree.findall(addnodes.desc)):
        if desc.get("domain") != "py" or desc.get("objtype") not in ("function", "class", "exception", "data"):
            continue
        signature = desc[0]
        qualified = f"{signature.get('module')}.{signature.get('fullname')}"
        if "." in signature.get("fullname", ""):
            continue                                     # a method or attribute: its class links back
        where = env.ldpbook_defs.get(qualified)
        if where is None:
            chapter = env.ldpbook_chapters.get(signature.get("module")) or _chapter_from_modidx(env, qualified)
            if chapter is None:
                logger.warning(f"API reference: no chapter exports {qualified}", location=docname)
                continue
            where = (chapter, None, None)
        chapter, anchor, section = where
        uri = app.builder.get_relative_uri(docname, chapter) + (f"#{anchor}" if anchor else "")
        title = env.titles[chapter].astext() if chapter in env.titles else chapter
        short = title.split(":")[0]                       # "Foundations: local differential ..." -> "Foundations"
        text = f"{short} › {section}" if section and section != title else title
        para = nodes.paragraph(classes=["ldpbook-explained"])
        para += nodes.Text("Explained in ")
        para += nodes.reference("", text, internal=True, refuri=uri)
        para += nodes.Text(".")
        content = next((c for c in desc.children if isinstance(c, addnodes.desc_content)), None)
        if content is not None:
            content.insert(0, para)


# Docstrings are numpy-style plain text with Unicode math, not reStructuredText: `|x − y|` is an absolute value,
# not a substitution. Before napoleon reads them, `|` outside backticks is escaped; after napoleon, a docstring
# that docutils still cannot parse cleanly is shown as preformatted text (as `help()` shows it), with a note in
# the build log, so that the -W build does not depend on every docstring being valid reStructuredText.

BACKTICK_SPAN = re.compile(r"(``.*?``|`[^`]*`)")


REFERENCE_UNDERSCORE = re.compile(r"(?<=\w)_(?=\W|$)")


def escape_bars(line: str) -> str:
    """Escape, outside backtick spans, `|` (absolute values and norms are not reST substitutions) and a `_` that
    ends a word (`I_|k|` is a subscript, not a hyperlink reference)."""
    return "".join(part if part.startswith("`") else
                   REFERENCE_UNDERSCORE.sub(r"\\_", part.replace("|", r"\|"))
                   for part in BACKTICK_SPAN.split(line))


def _escape_docstring(app, what, name, obj, options, lines):
    import inspect
    if what == "data" and inspect.getdoc(obj) == inspect.getdoc(type(obj)):
        lines[:] = []                    # a constant has no docstring of its own: not the docs of `dict`
    lines[:] = [escape_bars(line) for line in lines]


def rst_problems(text: str) -> list:
    "docutils' warnings and errors for a piece of reST, ignoring roles and directives that only Sphinx knows."
    import docutils.core

    document = docutils.core.publish_doctree(text, settings_overrides={
        "report_level": 2, "halt_level": 5, "warning_stream": False, "file_insertion_enabled": False})
    messages = list(document.findall(nodes.system_message)) + list(document.transform_messages)
    return [m.astext() for m in messages if m["level"] >= 2
            and not re.search(r"Unknown interpreted text role|Unknown directive type|No role entry|"
                              r"No directive entry|Trying .* as canonical", m.astext())]


def _check_docstring(app, what, name, obj, options, lines):
    problems = rst_problems("\n".join(lines))
    if problems:
        import inspect
        original = inspect.getdoc(obj) or ""
        logger.info(f"API reference: the docstring of {name} is not valid reStructuredText "
                    f"({problems[0].splitlines()[0]}); it is shown as preformatted text")
        lines[:] = ["::", ""] + ["    " + line for line in original.splitlines()] + [""]


# ---------------------------------------------------------------------------------------------------------------
# 3. Cross-links from inline code in the prose

CODE_NAME = re.compile(r"^(?P<name>[A-Za-z_][\w.]*)(?:\(.*\))?$", re.S)
NOT_LINKED = (nodes.literal_block, nodes.title, nodes.reference, addnodes.pending_xref, addnodes.desc,
              nodes.FixedTextElement)


class LinkApiNames(SphinxTransform):
    """Inline code naming an API member becomes a reference to its entry in the API reference."""

    default_priority = 410

    def apply(self, **kwargs):
        index = getattr(self.app, "ldpbook_api_index", None)
        if not index or self.env.docname == getattr(self.env, "ldpbook_api_page", None):
            return
        own_module = next((m for m, d in self.env.ldpbook_chapters.items() if d == self.env.docname), None)
        for literal in list(self.document.findall(nodes.literal)):
            if any(isinstance(parent, NOT_LINKED) for parent in _ancestors(literal)):
                continue
            match = CODE_NAME.match(literal.astext().strip())
            targets = index.get(match["name"], set()) if match else set()
            if len(targets) > 1:
                targets = {t for t in targets if own_module and t.startswith(own_module + ".")}
            if len(targets) != 1:
                continue
            target = next(iter(targets))
            top_level = target.count(".") == 2                    # ldpbook.module.name
            xref = addnodes.pending_xref("", refdomain="py", reftype="obj", reftarget=target, refexplicit=True,
                                         refwarn=top_level, refdoc=self.env.docname)
            literal.replace_self(xref)
            xref += literal
            literal["classes"] = literal.get("classes", []) + ["ldpbook-api-link"]


def _ancestors(node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


# ---------------------------------------------------------------------------------------------------------------
# 4. Honest repository links

REPOSITORY_URL = re.compile(r"^https://[\w.-]+\.[a-z]{2,}/[\w.-]+/[\w.-]+/?$")
LAUNCH_PROVIDERS = ("binderhub_url", "jupyterhub_url", "colab_url", "deepnote_url", "jupyterlite_url", "thebe")


def repository_settings(root: Path) -> tuple:
    "(git_url, branch) from settings.ini; git_url is '' unless it names a repository."
    config = configparser.ConfigParser(delimiters=["="])
    config.read(root / "settings.ini", encoding="utf-8")
    settings = config["DEFAULT"]
    url = settings.get("git_url", "").strip()
    if url and not REPOSITORY_URL.match(url):
        raise ValueError("settings.ini: git_url must be empty or a repository URL https://host/owner/name")
    return url, settings.get("branch", "main").strip() or "main"


def _repository_links(app, config):
    url, branch = repository_settings(Path(app.srcdir))
    options = dict(config.html_theme_options or {})
    launch = dict(options.get("launch_buttons") or {})
    if url:
        options.update(repository_url=url, repository_branch=branch, use_repository_button=True)
    else:
        options["repository_url"] = ""
        options["use_repository_button"] = False
        for key in ("use_edit_page_button", "use_issues_button"):
            options[key] = False
        launch = {k: v for k, v in launch.items() if k not in LAUNCH_PROVIDERS}
    options["launch_buttons"] = launch
    config.html_theme_options = options
    app.ldpbook_git_url = url


def _builder_inited(app):
    app.ldpbook_api_index = _api_index(app)


def _outdated(app, env, added, changed, removed):
    """In an incremental build, re-read the API page always (it is generated from the package, which Sphinx does
    not watch) and every page when the set of API names changed (their cross-links depend on it)."""
    names = sorted(app.ldpbook_api_index)
    if getattr(env, "ldpbook_api_names", None) != names:
        env.ldpbook_api_names = names
        return sorted(env.found_docs)
    page = getattr(env, "ldpbook_api_page", None)
    return [page] if page in env.found_docs else []


# ---------------------------------------------------------------------------------------------------------------
# 5. The PDF numbers results as the site does


def _site_numbering(app, config):
    "config-inited: the `numfig_secnum_depth` of the site (sphinx-jupyterbook-latex changes it later for LaTeX)."
    app.ldpbook_site_secnum_depth = config.numfig_secnum_depth


def _latex_numbers_like_site(app):
    """builder-inited, after sphinx-jupyterbook-latex: Sphinx assigns the numbers (`env.toc_fignumbers`, read by
    sphinx-proof and sphinx-exercise for headings and references) with the site's depth; the LaTeX writer gets
    sphinx-jupyterbook-latex's depth back once they are assigned (`_latex_writer_depth`)."""
    if app.builder.format != "latex" or app.config.numfig_secnum_depth == app.ldpbook_site_secnum_depth:
        return
    app.ldpbook_latex_secnum_depth = app.config.numfig_secnum_depth
    app.config.numfig_secnum_depth = app.ldpbook_site_secnum_depth


def _latex_writer_depth(app, env):
    """env-get-updated, after Sphinx's toctree collector has assigned the numbers: the LaTeX writer's figure and
    equation counters count the part level (sphinx-jupyterbook-latex's depth). The LaTeX builder emits no
    `write-started`."""
    depth = getattr(app, "ldpbook_latex_secnum_depth", None)
    if depth is not None:
        app.config.numfig_secnum_depth = depth
    return []


def proof_title(box) -> None:
    """Give a proof box (sphinx-proof's untitled admonition, whose first paragraph starts "Proof. ") the title
    "Proof", or "Proof of <reference>" when the text goes on with "of" and a reference (the LaTeX writer sets a
    reference in a title as plain text); the paragraph loses what went into the title."""
    paragraph = box.children[0] if box.children and isinstance(box.children[0], nodes.paragraph) else None
    if paragraph is None or not paragraph.children or not isinstance(paragraph[0], nodes.Text):
        return
    first = paragraph[0].astext()
    if not first.startswith("Proof. "):
        return
    rest, title = first[len("Proof. "):], nodes.title("", "Proof")
    moved = 1
    if rest.strip() == "of" and len(paragraph) > 1 and isinstance(paragraph[1], nodes.reference):
        title += [nodes.Text(" of "), paragraph[1].deepcopy()]
        rest, moved = "", 2
        if len(paragraph) > 2 and isinstance(paragraph[2], nodes.Text):
            rest, moved = paragraph[2].astext().lstrip(), 3
    for _ in range(moved):
        paragraph.remove(paragraph[0])
    if rest:
        paragraph.insert(0, nodes.Text(rest))
    if not paragraph.children:
        box.remove(paragraph)
    box.insert(0, title)


class ProofTitlesInLatex(SphinxPostTransform):
    "In the PDF, each proof box has a title instead of an empty title bar (see `proof_title`)."

    default_priority = 800                  # after the references are resolved (priority 10)
    formats = ("latex",)

    def run(self, **kwargs):
        from sphinx_proof.nodes import proof_node

        for box in list(self.document.findall(nodes.admonition)):
            if isinstance(box.parent, proof_node) and not any(isinstance(c, nodes.title) for c in box.children):
                proof_title(box)


# ---------------------------------------------------------------------------------------------------------------
# 6. Chapter numbers from the table of contents; appendix exercises numbered within their page


def numbered_chapters(root: Path) -> list:
    "The documents of the numbered parts of `_toc.yml` (`nbs/00_foundations`, ...), in order: chapters 1, 2, ..."
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    return [entry["file"] for part in toc.get("parts", []) if part.get("numbered")
            for entry in part.get("chapters", [])]


def chapter_label(docname: str) -> str:
    "The label of a chapter's title: `nbs/01_spr` -> `chapter-spr` (the file name without its number)."
    return "chapter-" + re.sub(r"^\d+_", "", docname.rsplit("/", 1)[-1]).lower()


def _label_chapter(app, doctree):
    "doctree-read: a chapter's title section gets its `chapter-<name>` label (a target for {numref} and {ref})."
    docname = app.env.docname
    if not hasattr(app, "ldpbook_chapters"):
        app.ldpbook_chapters = numbered_chapters(Path(app.srcdir))
    if docname not in app.ldpbook_chapters:
        return
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None or not section["ids"]:
        return
    std, name = app.env.get_domain("std"), chapter_label(docname)
    std.anonlabels[name] = (docname, section["ids"][0])
    std.labels[name] = (docname, section["ids"][0], section[0].astext())


def _number_appendix_exercises(app, env):
    """env-get-updated, after Sphinx's toctree collector has numbered the figures: on a page outside the numbered
    chapters, the exercises count from 1 (Sphinx counts them on across all such pages: the first exercise of the
    command-line appendix was "Exercise 4"). The numbers are what sphinx-exercise shows and references cite."""
    for docname, numbers in env.toc_fignumbers.items():
        exercises = numbers.get("exercise")
        if exercises and not env.toc_secnumbers.get(docname):
            for number, key in enumerate(sorted(exercises, key=exercises.get), 1):
                exercises[key] = (number,)
    return []


# ---------------------------------------------------------------------------------------------------------------
# 7. The PDF's front matter, chapters, appendices and back matter

MATTER_KINDS = ("front", "main", "appendix", "back")
# The document class is `report` (sphinx-jupyterbook-latex's jupyterBook.cls), which has no \frontmatter: a chapter
# is unnumbered (and listed in the contents without a number) when secnumdepth is below -1; fncychap's \appendix
# letters the chapters that follow ("Appendix A"). The pages of the front matter (the preface after the contents,
# the notation) are numbered i, ii, ... with the contents (whose running title "Contents" they no longer carry),
# and the chapters start again at page 1. The bibliography (which sphinx-jupyterbook-latex moves to the end of the
# document, right after the references page) is set inside that page, under its running title, instead of as a
# chapter "Bibliography" of its own.
MATTER_LATEX = r"""
\makeatletter
\newcommand{\ldpbook@unnumbered}{\xdef\ldpbook@secnumdepth{\the\c@secnumdepth}\setcounter{secnumdepth}{-2}}
\newcommand{\ldpbook@numbered}{\@ifundefined{ldpbook@secnumdepth}{}{\setcounter{secnumdepth}{\ldpbook@secnumdepth}}}
\newcommand{\ldpbookfrontmatter}{\ldpbook@unnumbered}
\newcommand{\ldpbookmainmatter}{\if@openright\cleardoublepage\else\clearpage\fi\pagenumbering{arabic}%
  \ldpbook@numbered\setcounter{chapter}{0}}
\newcommand{\ldpbookappendixmatter}{\ldpbook@numbered\appendix}
\newcommand{\ldpbookbackmatter}{\ldpbook@unnumbered}
\renewcommand{\sphinxtableofcontents}{\pagenumbering{roman}\begingroup\parskip\z@skip\sphinxtableofcontentshook
  \tableofcontents\endgroup\if@openright\cleardoublepage\else\clearpage\fi\markboth{}{}}
\renewenvironment{sphinxthebibliography}[1]{\def\chapter*##1{}\let\@mkboth\@gobbletwo\begin{thebibliography}{#1}}%
  {\end{thebibliography}}
\makeatother
"""


def part_matter(captions: list, matter: dict) -> dict:
    "Part caption -> 'front', 'main', 'appendix' or 'back', checked: every part of the toc has one valid kind."
    unknown = [c for c in captions if c not in matter]
    wrong = {c: k for c, k in matter.items() if k not in MATTER_KINDS}
    if unknown or wrong:
        raise ValueError(f"_config.yml: ldpbook_latex_matter must give each part of _toc.yml one of {MATTER_KINDS} "
                         f"(parts without one: {unknown}; invalid kinds: {wrong})")
    return {c: matter[c] for c in captions}


def _latex_matter_preamble(app, config):
    "config-inited: the commands that open each kind of matter, in the LaTeX preamble."
    elements = dict(config.latex_elements or {})
    elements["preamble"] = elements.get("preamble", "") + MATTER_LATEX
    config.latex_elements = elements


class LatexMatter(SphinxPostTransform):
    """Before each part of the assembled LaTeX document (sphinx-jupyterbook-latex makes each toc caption a section
    whose `docname` is the caption, inside a `start_of_file`), the command that opens its kind of matter."""

    default_priority = 750                  # after sphinx-jupyterbook-latex's LatexRootDocPostTransforms (700)
    formats = ("latex",)

    def run(self, **kwargs):
        import yaml

        toc = yaml.safe_load((Path(self.app.srcdir) / "_toc.yml").read_text(encoding="utf-8"))
        captions = [part["caption"] for part in toc.get("parts", []) if part.get("caption")]
        if not captions:
            return
        kinds = part_matter(captions, self.config.ldpbook_latex_matter or {})
        for start in list(self.document.findall(addnodes.start_of_file)):
            kind = kinds.get(start.get("docname"))
            if kind and isinstance(start.parent, nodes.compound) and start.parent.parent is self.document:
                start.parent.insert(start.parent.index(start),
                                    nodes.raw("", f"\\ldpbook{kind}matter\n", format="latex"))


# ---------------------------------------------------------------------------------------------------------------
# 8. Page titles with math read as text in the navigation

TEX_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ϵ", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ",
    "sigma": "σ", "tau": "τ", "phi": "ϕ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ",
    "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    "ell": "ℓ", "infty": "∞", "star": "⋆", "ast": "∗", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "top": "⊤",
    "times": "×", "cdot": "·", "to": "→", "in": "∈", "Vert": "‖", "mid": "|", ",": "", ";": " ", " ": " ",
}
TEX_TOKEN = re.compile(r"\\([A-Za-z]+|.)|([_^])|(\{)|(\})|(\s+)|(.)", re.S)


def tex_to_nodes(tex: str) -> list:
    """Simple inline TeX (letters, digits, Greek and a few symbols, `_` and `^` with one token or a {group}) as
    docutils nodes: text, subscripts and superscripts. ValueError for anything else (a fraction, a font, ...)."""
    tokens = [m for m in TEX_TOKEN.finditer(tex)]
    position = 0

    def item():
        nonlocal position
        match = tokens[position]
        position += 1
        command, script, opening, closing, space, char = match.groups()
        if command is not None:
            if command not in TEX_SYMBOLS:
                raise ValueError(f"\\{command} in the title formula ${tex}$ has no Unicode form")
            return [nodes.Text(TEX_SYMBOLS[command])]
        if opening:
            return group()
        if script or closing:
            raise ValueError(f"unbalanced {match[0]!r} in the title formula ${tex}$")
        return [nodes.Text(" " if space else char)]

    def group():
        nonlocal position
        result = []
        while position < len(tokens) and tokens[position][4] is None:
            result += element()
        if position == len(tokens):
            raise ValueError(f"unclosed {{ in the title formula ${tex}$")
        position += 1
        return result

    def element():
        nonlocal position
        match = tokens[position]
        if match[2]:
            position += 1
            if position == len(tokens):
                raise ValueError(f"{match[2]!r} with nothing after it in the title formula ${tex}$")
            box = (nodes.subscript if match[2] == "_" else nodes.superscript)()
            box += item()
            return [box]
        return item()

    result = []
    while position < len(tokens):
        result += element()
    return result


def plain_title(title) -> list:
    "The children of a title node with each inline formula written as Unicode text, sub- and superscripts."
    children = []
    for child in title.children:
        children += tex_to_nodes(child.astext()) if isinstance(child, nodes.math) else [child.deepcopy()]
    return children


def _plain_page_titles(app, doctree):
    """doctree-read, after Sphinx's title and toc collectors: the page's title as text (`env.titles`,
    `env.longtitles`, the page's own entry in `env.tocs`), for the sidebar, the browser tab and the links."""
    env, docname = app.env, app.env.docname
    title = env.titles.get(docname)
    if title is None or not any(isinstance(n, nodes.math) for n in title.findall()):
        return
    try:
        text = plain_title(title)
    except ValueError as error:
        raise ValueError(f"{docname}: the page title {title.astext()!r}: {error}") from None
    for store in (env.titles, env.longtitles):
        if docname in store:
            store[docname].children = []
            store[docname] += [child.deepcopy() for child in text]
    # sphinx-proof, sphinx-exercise and sphinx-jupyterbook-latex find a result's page in the LaTeX build by its
    # title section, whose names must hold the lowercased text of `env.titles`
    section = next(iter(doctree.findall(nodes.section)), None)
    name = env.titles[docname].astext().lower()
    if section is not None and name not in section["names"]:
        section["names"].append(name)
    toc = env.tocs.get(docname)
    reference = next(iter(toc.findall(nodes.reference)), None) if toc is not None else None
    if reference is not None and any(isinstance(n, nodes.math) for n in reference.findall()):
        reference.children = []
        reference += [child.deepcopy() for child in text]


class TitleMathInLatex(SphinxPostTransform):
    r"""In the PDF, a formula in a heading is typeset in the heading and the contents, and written as Unicode text
    in the PDF's bookmarks (`\texorpdfstring`), which cannot hold TeX."""

    default_priority = 800
    formats = ("latex",)

    def run(self, **kwargs):
        for math in list(self.document.findall(nodes.math)):
            if not isinstance(math.parent, nodes.title) or not isinstance(math.parent.parent, nodes.section):
                continue
            try:
                text = "".join(n.astext() for n in tex_to_nodes(math.astext()))
            except ValueError:
                continue
            math.replace_self(nodes.raw("", rf"\texorpdfstring{{\protect\({math.astext()}\protect\)}}{{{text}}}", format="latex"))


# ---------------------------------------------------------------------------------------------------------------
# 9. A chapter reference reads its page once

_TARGET_PAGES: dict = {}        # docname -> doctree, read only by the {numref} lookup, for one writing phase


def _forget_target_pages(*args):
    "env-updated (the pages were read again) and build-finished: the copies are dropped."
    _TARGET_PAGES.clear()


def _reading_each_page_once(resolve):
    "StandardDomain._resolve_numref_xref with `env.get_doctree` answered from `_TARGET_PAGES`."
    def resolve_numref(self, env, *args, **kwargs):
        read = env.get_doctree

        def get_doctree(docname):
            if docname not in _TARGET_PAGES:
                _TARGET_PAGES[docname] = read(docname)
            return _TARGET_PAGES[docname]
        env.get_doctree = get_doctree
        try:
            return resolve(self, env, *args, **kwargs)
        finally:
            del env.get_doctree
    resolve_numref.reads_each_page_once = True
    return resolve_numref


def setup(app):
    app.add_transform(CleanNotebookCells)
    app.add_transform(LinkApiNames)
    app.connect("config-inited", _repository_links)
    app.connect("builder-inited", _builder_inited)
    app.connect("env-get-outdated", _outdated)
    app.connect("env-before-read-docs", _init_env)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("source-read", _api_source)
    app.connect("autodoc-process-docstring", _escape_docstring, priority=400)    # napoleon runs at 500
    app.connect("autodoc-process-docstring", _check_docstring, priority=900)
    app.connect("doctree-resolved", _add_back_links)
    app.connect("config-inited", _site_numbering)
    app.connect("builder-inited", _latex_numbers_like_site, priority=800)   # sphinx-jupyterbook-latex: 500
    app.connect("env-get-updated", _latex_writer_depth, priority=900)         # Sphinx's collector: 500
    app.connect("doctree-read", _label_chapter)
    app.connect("env-get-updated", _number_appendix_exercises, priority=900)  # Sphinx's collector: 500
    app.add_post_transform(ProofTitlesInLatex)
    app.add_config_value("ldpbook_latex_matter", {}, "env", dict)
    app.connect("config-inited", _latex_matter_preamble)
    app.add_post_transform(LatexMatter)
    app.connect("doctree-read", _plain_page_titles, priority=900)             # Sphinx's collectors: 500
    app.add_post_transform(TitleMathInLatex)
    from sphinx.domains.std import StandardDomain
    if not getattr(StandardDomain._resolve_numref_xref, "reads_each_page_once", False):
        StandardDomain._resolve_numref_xref = _reading_each_page_once(StandardDomain._resolve_numref_xref)
    app.connect("env-updated", _forget_target_pages)
    app.connect("build-finished", _forget_target_pages)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 6}

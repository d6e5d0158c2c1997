# ldpbook: `make book` builds the site, `make test` runs every check. Both create .venv and install what they need.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with nbval_sanitize.cfg --nbval-kernel-startup-timeout 300
JOBS   ?= 2
# the notebooks that `make notebooks`, `make portable` and `make outputs` check (e.g. NBS=nbs/01_spr.ipynb)
NBS    ?= nbs/
# pytest-xdist: tests (and whole notebooks, one per worker) run on $(JOBS) processes
XDIST  := -n $(JOBS) --dist loadfile

.PHONY: book test export sync outputs lines unit notebooks portable site browser site-browser chromium bubblewrap cddlib package benchmarks benchmarks-all execute clean

$(STAMP): requirements-dev.txt settings.ini setup.py | cddlib
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt -e ".[dev,distributed,teaching,opendp]"
	touch $(STAMP)

export: $(STAMP)
	$(BIN)/nbdev_export

book: export
	$(BIN)/jupyter-book build . -W
	@echo "The book is at $(CURDIR)/_build/html/index.html"

# `make test` runs in two rounds after the export check. The single-threaded checks (the two lints, the site build
# and its browser check, the package check) run beside the unit tests, which keep both cores busy only part of the
# time (child processes starting, timeouts running out, the last file alone); then the two strict nbval runs go
# side by side, so neither waits alone on its slowest notebook. Make prints each target's output as one block when
# it ends (--output-sync) and stops at the first failure. chromium and bubblewrap are installed first, one apt-get
# at a time.
test: sync bubblewrap chromium
	$(MAKE) --no-print-directory -j5 --output-sync=target -o export outputs lines unit site-browser package
	$(MAKE) --no-print-directory -j2 --output-sync=target -o export notebooks portable
	@echo "make test: all checks passed"

sync: export
	@changed="$$(git status --porcelain -- ldpbook)"; \
	if [ -n "$$changed" ]; then \
	  echo "export sync: ldpbook/ differs from what nbdev_export writes from nbs/ (run nbdev_export and commit):"; \
	  echo "$$changed"; exit 1; fi
	@echo "export sync: ldpbook/ matches the notebooks"

unit: $(STAMP) bubblewrap
	$(BIN)/pytest $(XDIST) tests/

notebooks: $(STAMP) bubblewrap
	$(BIN)/pytest $(XDIST) $(NBVAL) $(NBS)

# Portability gate: the same strict nbval run with numpy's SIMD dispatch held to its baseline, as on another CPU.
# The feature names are read from numpy at run time (they differ between numpy builds and architectures).
portable: $(STAMP) bubblewrap
	NPY_DISABLE_CPU_FEATURES="$$($(BIN)/python -c 'from numpy._core._multiarray_umath import __cpu_dispatch__ as d; print(" ".join(d))')" \
	  $(BIN)/pytest $(XDIST) $(NBVAL) $(NBS)

# No checked cell may store round-off (a number below 1e-12 in scientific notation): it differs between CPUs.
outputs: $(STAMP)
	$(BIN)/python tools/lint_outputs.py --self-test
	$(BIN)/python tools/lint_outputs.py $(if $(filter %.ipynb,$(NBS)),$(NBS),$(NBS:%/=%)/*.ipynb)

# Chapter code is seen whole on the site: no shown code line over 120 characters (tools/lint_code_lines.py); no
# chapter number written by hand in the book, the tests or the benchmarks (tools/lint_chapter_refs.py).
lines: $(STAMP)
	$(BIN)/python tools/lint_code_lines.py --self-test $(if $(filter %.ipynb,$(NBS)),$(NBS),$(NBS:%/=%)/[0-9]*.ipynb)
	$(BIN)/python tools/lint_chapter_refs.py --self-test $(if $(filter %.ipynb,$(NBS)),$(NBS),$(NBS:%/=%)/*.ipynb $(NBS:%/=%)/*.md README.md CONTRIBUTING.md \
	  tests/*.py tests/grading/*.py benchmarks/*.py)

site: export
	rm -rf _build/html          # no stale page of a chapter that has left the toc
	$(BIN)/jupyter-book build . -W

CHECK_SITE := $(BIN)/python tools/check_site.py _build/html
browser: chromium
	$(CHECK_SITE)

# The site build and its browser check (run by `make test` beside the unit tests).
site-browser: site chromium
	$(CHECK_SITE)

chromium:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing chromium with apt-get (needed for the offline math check)"; \
	  (apt-get install -y -qq chromium >/dev/null 2>&1 || \
	   (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1)) || \
	  { echo "could not install chromium with apt-get"; exit 1; }; \
	else echo "chromium is missing: install it with 'sudo apt-get install -y chromium' and rerun"; exit 1; fi

# The grading harness runs students' code in a bubblewrap sandbox (nbs/93_grading.ipynb). As root it is installed
# here; without it grading still works, without the sandbox, and says so.
bubblewrap:
	@if command -v bwrap >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing bubblewrap with apt-get (the sandbox of the grading harness)"; \
	  (apt-get install -y -qq bubblewrap >/dev/null 2>&1 || \
	   (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq bubblewrap >/dev/null 2>&1)) || \
	  { echo "could not install bubblewrap with apt-get"; exit 1; }; \
	else echo "bubblewrap is missing: grading runs without its sandbox ('sudo apt-get install -y bubblewrap' adds it)"; fi

# pycddlib (the approximate chapter's exact vertex enumeration, in its checks and tests only) ships only a source
# package: it builds against cddlib and GMP (Debian's libcdd-dev and libgmp-dev), installed with apt-get as root.
cddlib:
	@if [ -f /usr/include/cddlib/cdd.h ] || [ -f /usr/include/cdd/cdd.h ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing cddlib with apt-get (pycddlib builds against it)"; \
	  (apt-get install -y -qq libcdd-dev libgmp-dev >/dev/null 2>&1 || \
	   (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq libcdd-dev libgmp-dev >/dev/null 2>&1)) || \
	  { echo "could not install libcdd-dev with apt-get"; exit 1; }; \
	else echo "cddlib is missing: install it with 'sudo apt-get install -y libcdd-dev libgmp-dev' and rerun"; exit 1; fi

# The PDF of the book: jupyter-book's LaTeX builder (XeLaTeX, _config.yml) into _build/latex/ldpbook.pdf, then
# tools/check_pdf.py (every chapter, figures, theorem boxes, references resolved, no missing glyph, nothing running
# off the page; a few pages rendered with pdftoppm). TeX comes from Debian's packages, installed as chromium is.
TEX_PACKAGES := texlive-xetex texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended latexmk \
                fonts-freefont-otf fonts-dejavu-core poppler-utils
pdf: export tex
	rm -rf _build/latex
	$(BIN)/jupyter-book build . --builder pdflatex
	$(BIN)/python tools/check_pdf.py _build/latex

tex:
	@if command -v xelatex >/dev/null 2>&1 && command -v latexmk >/dev/null 2>&1 && command -v pdftoppm >/dev/null 2>&1 \
	   && kpsewhich newunicodechar.sty >/dev/null 2>&1 && fc-list | grep -q DejaVuSansMono; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing TeX with apt-get (needed for the PDF): $(TEX_PACKAGES)"; \
	  (apt-get install -y -qq --no-install-recommends $(TEX_PACKAGES) >/dev/null 2>&1 || \
	   (apt-get update -qq >/dev/null 2>&1 && \
	    apt-get install -y -qq --no-install-recommends $(TEX_PACKAGES) >/dev/null 2>&1)) || \
	  { echo "could not install TeX with apt-get"; exit 1; }; \
	else echo "TeX is missing: install it with 'sudo apt-get install -y --no-install-recommends $(TEX_PACKAGES)'"; \
	  exit 1; fi

# The sdist and the wheel (python -m build), the wheel installed into a fresh virtual environment where the README
# tour and `ldpbook --help` run, __version__ is settings.ini's and py.typed ships.
package: export
	$(BIN)/python tools/check_package.py

# Re-execute notebooks in place (after editing one): make execute NB=nbs/00_foundations.ipynb
execute: export
	$(BIN)/python tools/run_nb.py $(or $(NB),nbs/[0-9]*.ipynb)

# The speed guard: every engine's ratio against its baseline, run side by side in one process, printed next to the
# floor recorded in benchmarks/floors.json (with the machine and date); fails when a ratio is below its floor.
benchmarks: export
	$(BIN)/python benchmarks/guard.py

# The detailed benchmarks (more numbers, same baselines; several minutes each)
benchmarks-all: export
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf _build .pytest_cache dist build

"""Build the sdist and the wheel with `python -m build`, install the wheel into a fresh virtual environment and use
it there as a programmer would: the README's tour runs, `ldpbook --help` works, `ldpbook.__version__` is
settings.ini's version, `py.typed` ships and so do the data sets of `ldpbook/data/` (`load_health_visits()` reads
the RAND extract from the installed package).

Usage: python tools/check_package.py [--keep DIR]

`python -m build` makes the sdist and then the wheel from the unpacked sdist, so a file the sdist forgets breaks
the wheel build. The build runs in a copy of the project's files (those git tracks or would track), never in the
working tree: setuptools stages the sdist in a folder named for the release beside setup.py, and `make test` builds
the site at the same time, so a staging folder in the tree would be read as a page of the book. The fresh
environment gets the package's requirements from the registry (pip's cache makes this quick), held to the versions
pinned in requirements-dev.txt; it runs from a temporary folder, so it imports the installed package, never the
source tree. It is made without a pip of its own (this environment's pip installs into
it with `--python`), and nothing is byte-compiled at install (Python compiles what the checks import): the same
packages installed, in a third of the time. Then the optional extra is added to the same environment (`pip install
'ldpbook[opendp]'`, OpenDP's 0.16 series) and `ldpbook.opendp` is used there (`check_opendp_extra`).
"""
import argparse
import configparser
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*command, cwd=None, quiet=False):
    "Run a command; on failure exit with its output."
    result = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"check_package: `{' '.join(map(str, command))}` failed ({result.returncode}):\n"
                 f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result.stdout


def settings():
    config = configparser.ConfigParser(delimiters=["="])
    config.read(ROOT / "settings.ini", encoding="utf-8")
    return config["DEFAULT"]


def readme_tour() -> str:
    "The README's Python block, extracted as tests/test_readme.py does."
    block = re.search(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    if not block:
        sys.exit("check_package: README.md has no ```python block")
    return block.group(1)


def source_copy(folder: Path) -> Path:
    "The project's files (tracked, or untracked and not ignored, as in the working tree) copied into folder/source."
    listed = run("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=ROOT).split("\0")
    source = folder / "source"
    for name in filter(None, listed):
        origin = ROOT / name
        if origin.is_file():                              # a file deleted but not yet committed is skipped
            target = source / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, target)
    return source


def pinned_constraints(folder: Path) -> Path:
    "requirements-dev.txt as a pip constraints file (constraints cannot carry extras such as dask[distributed])."
    lines = [line.split("#")[0].strip() for line in (ROOT / "requirements-dev.txt").read_text().splitlines()]
    path = folder / "constraints.txt"
    path.write_text("\n".join(line for line in lines if line and "[" not in line) + "\n")
    return path


def check_artifacts(dist: Path, name: str, version: str):
    """One sdist and one wheel, named for the version.

    The sdist holds settings.ini; both hold every module, py.typed and the data files of ldpbook/data/."""
    sdists, wheels = list(dist.glob(f"{name}-{version}.tar.gz")), list(dist.glob(f"{name}-{version}-*.whl"))
    if len(sdists) != 1 or len(wheels) != 1:
        sys.exit(f"check_package: expected one sdist and one wheel for version {version} in {dist}, "
                 f"found {[p.name for p in dist.iterdir()]}")
    with tarfile.open(sdists[0]) as sdist:
        members = {Path(m).relative_to(f"{name}-{version}").as_posix() for m in sdist.getnames() if "/" in m}
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / name).glob("*.py")} | {f"{name}/py.typed"}
    modules |= {p.relative_to(ROOT).as_posix() for p in (ROOT / name / "data").glob("*.csv")}
    missing = ({"settings.ini", "setup.py", "README.md"} | modules) - members
    if missing:
        sys.exit(f"check_package: the sdist lacks {sorted(missing)}")
    with zipfile.ZipFile(wheels[0]) as wheel:
        missing = modules - set(wheel.namelist())
    if missing:
        sys.exit(f"check_package: the wheel lacks {sorted(missing)}")
    return wheels[0]


OPENDP_PROBE = """
import importlib, pkgutil, sys
import ldpbook
for m in pkgutil.iter_modules(ldpbook.__path__):
    if m.name != "opendp":
        try:
            importlib.import_module("ldpbook." + m.name)
        except ImportError as err:                 # a module of another extra (teaching) says which
            if "extra" not in str(err):
                raise
assert not [n for n in sys.modules if n.split(".")[0] == "opendp"], "a module other than ldpbook.opendp imports opendp"
import opendp.prelude as dp
from ldpbook.opendp import mechanism_measurement
from ldpbook.spr import divergence_optimal
dp.enable_features("contrib", "honest-but-curious")
meas = mechanism_measurement(divergence_optimal([0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4], 1.0))
both = dp.c.make_composition([meas, meas])
assert meas(3) in (0, 1) and len(both(0)) == 2
print(dp.__version__, meas.map(1), both.map(1))
"""


def check_opendp_extra(python: Path, wheel: Path, work: Path, scratch: Path):
    """The optional extra: without it `ldpbook.opendp` says how to install OpenDP; `pip install 'ldpbook[opendp]'`
    adds OpenDP's 0.16 series, whose measurement maps d_in = 1 to eps and composes to 2 eps."""
    refused = run(python, "-c", "try:\n import ldpbook.opendp\nexcept ImportError as err:\n print(err)", cwd=scratch)
    if "pip install 'ldpbook[opendp]'" not in refused:
        sys.exit(f"check_package: without the extra, `import ldpbook.opendp` did not say how to install it:\n{refused}")
    run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--disable-pip-version-check",
        "--no-compile", "-c", pinned_constraints(work), f"{wheel}[opendp]")
    version, eps, composed = run(python, "-c", OPENDP_PROBE, cwd=scratch).split()
    if not version.startswith("0.16.") or (float(eps), float(composed)) != (1.0, 2.0):
        sys.exit(f"check_package: with the opendp extra: OpenDP {version}, map(1) = {eps}, composed {composed}")
    print(f"check_package: `pip install 'ldpbook[opendp]'` adds OpenDP {version}; a mechanism's measurement maps "
          f"d_in = 1 to {eps} and two composed to {composed}; no other module imports OpenDP")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", help="build into this folder and keep it (default: a temporary folder)")
    args = parser.parse_args()
    cfg = settings()
    name, version = cfg["lib_name"], cfg["version"]
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ldpbook-package-"))
    try:
        dist, env, scratch = work / "dist", work / "venv", work / "scratch"
        shutil.rmtree(dist, ignore_errors=True)
        shutil.rmtree(env, ignore_errors=True)
        shutil.rmtree(work / "source", ignore_errors=True)
        scratch.mkdir(parents=True, exist_ok=True)
        run(sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", dist, source_copy(work))
        wheel = check_artifacts(dist, name, version)
        print(f"check_package: built {', '.join(sorted(p.name for p in dist.iterdir()))}")

        venv.EnvBuilder(with_pip=False, clear=True).create(env)
        python = env / "bin" / "python"
        run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--disable-pip-version-check",
            "--no-compile", "-c", pinned_constraints(work), wheel)
        print(f"check_package: installed {wheel.name} into a fresh environment")

        probe = ("import importlib.resources, ldpbook; print(ldpbook.__version__); "
                 "print(importlib.resources.files('ldpbook').joinpath('py.typed').is_file()); print(ldpbook.__file__)")
        installed_version, typed, location = run(python, "-c", probe, cwd=scratch).split()
        if installed_version != version:
            sys.exit(f"check_package: ldpbook.__version__ is {installed_version}, settings.ini says {version}")
        if typed != "True":
            sys.exit("check_package: the installed package has no py.typed")
        if not Path(location).resolve().is_relative_to(env.resolve()):
            sys.exit(f"check_package: imported ldpbook from {location}, not from the fresh environment")

        (scratch / "tour.py").write_text(readme_tour(), encoding="utf-8")
        printed = run(python, "tour.py", cwd=scratch)
        if not printed.strip():
            sys.exit("check_package: the README tour printed nothing")
        data = ("from ldpbook.estimated import load_health_visits; x0, x1 = load_health_visits().populations(); "
                "print(x0.size + x1.size)")
        rows = run(python, "-c", data, cwd=scratch).strip()
        if rows != "20190":
            sys.exit(f"check_package: load_health_visits() in the fresh environment read {rows} rows, not 20190")
        usage = run(env / "bin" / "ldpbook", "--help", cwd=scratch)
        if "usage:" not in usage.lower():
            sys.exit(f"check_package: `ldpbook --help` printed no usage:\n{usage[:500]}")
        print(f"check_package: in the fresh environment ldpbook {installed_version} imports from site-packages, "
              f"ships py.typed and the data sets (load_health_visits() reads {rows} rows), runs the README tour "
              f"and `ldpbook --help`")
        check_opendp_extra(python, wheel, work, scratch)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Packaging for ldpbook: metadata is read from settings.ini (the nbdev configuration).

`python -m build` makes the sdist (MANIFEST.in adds settings.ini, which this file reads) and a wheel from it.
The version is settings.ini's `version`, which nbdev_export also writes into `ldpbook/__init__.py`; the package
ships `py.typed` (PEP 561: its type hints are meant for type checkers) and the data sets of `ldpbook/data/`
(`ldpbook.estimated.load_health_visits` reads them from the installed package).
"""
from configparser import ConfigParser
from pathlib import Path

from setuptools import find_packages, setup

config = ConfigParser(delimiters=["="])
config.read("settings.ini", encoding="utf-8")
cfg = config["DEFAULT"]


def _split(key):
    return cfg.get(key, "").split()


extras = {"dev": _split("dev_requirements")}
for key in cfg:
    if key.endswith("_extra_requirements"):
        extras[key[: -len("_extra_requirements")]] = _split(key)

setup(
    name=cfg["lib_name"],
    version=cfg["version"],
    description=cfg["description"],
    long_description=Path("README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    author=cfg["author"],
    author_email=cfg["author_email"],
    license="Apache-2.0",
    url=cfg.get("git_url", "").strip() or None,      # empty until the book has a public repository
    keywords=cfg["keywords"],
    python_requires=">=" + cfg["min_python"],
    packages=find_packages(include=[cfg["lib_path"], cfg["lib_path"] + ".*"]),
    package_data={cfg["lib_path"]: ["py.typed", "data/*.csv"]},   # the shipped data sets (ldpbook/data/)
    install_requires=_split("requirements"),
    extras_require=extras,
    entry_points={"console_scripts": _split("console_scripts"),
                  "nbdev": [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"]},
    zip_safe=False,
)

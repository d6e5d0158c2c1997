"""Packaging for ldpbook: metadata is read from settings.ini (the nbdev configuration)."""
from configparser import ConfigParser

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
    author=cfg["author"],
    author_email=cfg["author_email"],
    license="Apache-2.0",
    url=cfg.get("git_url", "").strip() or None,      # empty until the book has a public repository
    keywords=cfg["keywords"],
    python_requires=">=" + cfg["min_python"],
    packages=find_packages(include=[cfg["lib_path"], cfg["lib_path"] + ".*"]),
    install_requires=_split("requirements"),
    extras_require=extras,
    entry_points={"console_scripts": _split("console_scripts"),
                  "nbdev": [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"]},
    zip_safe=False,
)

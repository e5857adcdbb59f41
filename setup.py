"""The package list for setuptools (everything else is in pyproject.toml).

One top-level package in site-packages, `pt2_viewer`, while the repository keeps its folders: app/ and core/ become
`pt2_viewer.app` and `pt2_viewer.core` in a wheel, and resources/ and packaging/ ride along as package data (icons,
the bundled examples, the desktop files). From a checkout, pt2_viewer/__init__.py finds core/ and app/ beside it.
"""
from pathlib import Path

from setuptools import find_packages, setup

CODE = {"app": "app", "core": "core"}
DATA = {"resources": "resources", "packaging": "packaging"}

packages = ["pt2_viewer"]
package_dir = {"pt2_viewer": "pt2_viewer"}
for name, folder in CODE.items():
    package_dir[f"pt2_viewer.{name}"] = folder
    packages += [f"pt2_viewer.{p}" for p in find_packages(include=[name, f"{name}.*"])]
data_packages = []
for name, folder in DATA.items():  # each folder of data is a package too, else setuptools warns on every install
    for sub in [Path(folder), *sorted(p for p in Path(folder).rglob("*") if p.is_dir() and p.name != "__pycache__")]:
        package = ".".join(["pt2_viewer", name, *sub.relative_to(folder).parts])
        package_dir[package] = str(sub)
        data_packages.append(package)
packages += data_packages

setup(
    packages=packages,
    package_dir=package_dir,
    package_data={package: ["*"] for package in data_packages},
    exclude_package_data={package: ["*.pyc"] for package in data_packages},
)

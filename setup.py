"""Package discovery (the metadata is in pyproject.toml): every folder under augmenter/, and the top-level
policies/, envs/ and configs/ installed as augmenter.policies, augmenter.envs and augmenter.configs, so that
exactly one top-level package, augmenter, lands in site-packages. Folders of data (prompt files, fitted models,
the web page, config groups) are namespace packages: their files ship as package data (pyproject.toml)."""

from setuptools import find_namespace_packages, setup

MAPPED = {"augmenter.policies": "policies", "augmenter.envs": "envs", "augmenter.configs": "configs"}
SKIP = ["*__pycache__*"]

packages = find_namespace_packages(include=["augmenter", "augmenter.*"], exclude=SKIP)
for name, folder in MAPPED.items():
    packages += [name, *(f"{name}.{sub}" for sub in find_namespace_packages(folder, exclude=SKIP))]

setup(packages=packages, package_dir={"augmenter": "augmenter", **MAPPED})

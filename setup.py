"""Build hook: the wheel carries the repository-root files the local commands read.

Everything else about the package is declared in ``pyproject.toml``; this file only adds
a ``build_py`` step that copies :data:`BUNDLED` (paths relative to the repository root)
into the built package as ``quotagov_tools/_bundled/<name>``. The files stay where they are
in the checkout (``sam build`` reads ``template.yaml`` at the root, and the functions'
``CodeUri: src/`` gets no copy); :func:`quotagov_tools.local.stack.default_template_path`
looks for the bundled copy after ``./template.yaml``. An editable install bundles
nothing: it finds the checkout's own files.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
#: Repository-root files copied into ``quotagov_tools/_bundled/`` of the wheel.
BUNDLED = ("template.yaml",)


class BuildPyWithBundled(build_py):
    """``build_py`` that also copies :data:`BUNDLED` into ``<build_lib>/quotagov_tools/_bundled``."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib) / "quotagov_tools" / "_bundled"
        target.mkdir(parents=True, exist_ok=True)
        for name in BUNDLED:
            shutil.copyfile(ROOT / name, target / Path(name).name)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs: list[str] = list(super().get_outputs(include_bytecode))
        if not self.editable_mode:
            target = Path(self.build_lib) / "quotagov_tools" / "_bundled"
            outputs += [str(target / Path(name).name) for name in BUNDLED]
        return outputs


setup(cmdclass={"build_py": BuildPyWithBundled})

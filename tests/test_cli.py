"""The command line parses and reports usage errors with exit code 2."""

import argparse
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from quotagov_tools.cli import EXIT_BROKEN_PIPE, build_parser, main, plain_text

ROOT = Path(__file__).resolve().parents[1]


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    assert "quotagov" in capsys.readouterr().out


def test_missing_command_is_usage_error() -> None:
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command and subcommand parser, with the words that reach it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


MARKUP = re.compile(r"``|:(mod|func|class|meth|data|attr|exc):`")


def test_every_help_lists_its_options_in_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    commands = list(_commands(build_parser()))
    assert len(commands) > 12
    for words, parser in commands:
        with pytest.raises(SystemExit) as exc:
            main([*words, "--help"])
        assert exc.value.code == 0
        text = capsys.readouterr().out
        assert not MARKUP.search(text), (words, MARKUP.search(text))
        for action in parser._actions:
            assert action.help != argparse.SUPPRESS, (words, action.dest)
            for option in action.option_strings:
                assert option in text, (words, option)


def test_serve_help_names_host(capsys: pytest.CaptureFixture[str]) -> None:
    # a new user's finding: --host existed but was hidden
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    assert "--host HOST          address to listen on; must be a loopback address" in (
        capsys.readouterr().out
    )


def test_plain_text_takes_docstring_markup_out() -> None:
    assert plain_text("``--json`` (see :mod:`quotagov_tools.local.demo_story`)") == (
        "--json (see quotagov_tools.local.demo_story)"
    )
    assert plain_text(":func:`~quotagov.a.run` and :class:`the engine <quotagov.Engine>`") == (
        "run and the engine"
    )


@pytest.mark.slow
def test_make_serve_passes_port_through() -> None:
    # a new user's finding: make serve always bound 3000
    root = Path(__file__).resolve().parents[1]
    for extra, port in (([], "3000"), (["PORT=3101"], "3101")):
        dry = subprocess.run(
            ["make", "-n", "--no-print-directory", "-C", str(root), "serve", *extra],
            capture_output=True,
            text=True,
            check=True,
        )
        assert dry.stdout.splitlines()[-1] == f".venv/bin/quotagov serve --port {port}"


@pytest.mark.slow
def test_a_reader_that_closes_the_pipe_early_gets_no_traceback() -> None:
    # `quotagov simulate ... --output json | head -c 0`: the reader is gone before the
    # command writes, so its first write meets a closed pipe
    walkthrough = ROOT / "src/quotagov/examples/aws-walkthrough.json"
    command = [sys.executable, "-m", "quotagov_tools.cli", "simulate", str(walkthrough)]
    with subprocess.Popen(
        [*command, "--output", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()
        errors = process.stderr.read().decode()
        code = process.wait(timeout=60)
    assert errors == ""
    assert code == EXIT_BROKEN_PIPE

"""The `spacy-lookahead` command (also `python -m spacy_lookahead`): one typer
app, as spaCy's own CLI, over the commands' parsers (each keeps its own
options and --help)."""
import sys
from typing import Callable, List, Optional

import typer

app = typer.Typer(name="spacy-lookahead", no_args_is_help=True, add_completion=False,
                  help="spacy-lookahead: evaluate with gold inputs, jackknife a corpus, "
                       "annotate or train on Dask. COMMAND --help gives a command's options.")
# the command's own parser reads the rest of the line, --help included
PASS_THROUGH = {"allow_extra_args": True, "ignore_unknown_options": True}


def _run(main: Callable[[Optional[List[str]]], int], args: List[str]) -> None:
    sys.exit(main(args))


@app.command(context_settings=PASS_THROUGH, add_help_option=False)
def evaluate(ctx: typer.Context) -> None:
    """spacy evaluate with the gold input annotation kept (MODEL DATA.spacy --inputs tag[,chunks])."""
    from .evaluate import main
    _run(main, ctx.args)


@app.command(context_settings=PASS_THROUGH, add_help_option=False)
def jackknife(ctx: typer.Context) -> None:
    """Tag a training corpus with models that never saw each part (CONFIG TRAIN.spacy OUTPUT.spacy)."""
    from .jackknife import main
    _run(main, ctx.args)


@app.command(context_settings=PASS_THROUGH, add_help_option=False)
def distributed(ctx: typer.Context) -> None:
    """annotate | train on Dask (the `distributed` extra)."""
    from .distributed.__main__ import main
    _run(main, ctx.args)


@app.command("migrate-config")
def migrate_config(paths: List[str] = typer.Argument(
        ..., help="config files, or saved pipelines (their config.cfg is rewritten)")) -> None:
    """Rewrite the flat search and learner settings of earlier versions
    (search = "beam", depth, beam_width, learner = "sapo", n, l2 ...) as
    [components.NAME.search] and [components.NAME.learner] blocks, in place."""
    from pathlib import Path

    from .pipes.legacy import migrate_path
    for path in paths:
        if not Path(path).exists():
            typer.echo(f"{path}: no such file or directory", err=True)
            raise typer.Exit(1)
        done = migrate_path(Path(path))
        typer.echo(f"{path}: " + (f"rewrote {', '.join(done)}" if done else "nothing to rewrite"))

"""A training logger that keeps the learning curves: spaCy's console table,
plus one JSON line per evaluation with the epoch, the dev scores (including
each component's mean |w|, Sun et al.'s w-complexity) and the losses, for the
benchmark's plots. Registered as `spacy_lookahead.curves_logger.v1`."""
from pathlib import Path
from typing import IO, Any, Callable, Dict, Optional, Tuple

import srsly
from spacy import util
from spacy.training.loggers import console_logger_v3


@util.registry.loggers("spacy_lookahead.curves_logger.v1")
def curves_logger(path: Optional[str] = None, progress_bar: Optional[str] = None,
                  console_output: bool = True):
    """path: the JSONL file to write (overwritten; parent dirs are created);
    None: the console table only. progress_bar / console_output: as
    spacy.ConsoleLogger.v3."""
    console = console_logger_v3(progress_bar=progress_bar, console_output=console_output)

    def setup(nlp, stdout: IO, stderr: IO) -> Tuple[Callable[[Optional[Dict[str, Any]]], None],
                                                      Callable[[], None]]:
        log_step, finalize = console(nlp, stdout, stderr)
        out = Path(path) if path else None
        if out is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text("")

        def log(info: Optional[Dict[str, Any]]) -> None:
            log_step(info)
            if info is None or out is None:
                return
            scores = {k: float(v) for k, v in info["other_scores"].items()
                      if isinstance(v, (int, float)) and not isinstance(v, bool)}
            row = {"epoch": info["epoch"], "step": info["step"], "seconds": info.get("seconds"),
                   "words": info.get("words"), "score": float(info["score"]), "scores": scores,
                   "losses": {k: float(v) for k, v in info["losses"].items()}}
            with out.open("a", encoding="utf8") as f:
                f.write(srsly.json_dumps(row) + "\n")

        return log, finalize

    return setup

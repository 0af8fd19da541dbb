"""`python -m spacy_lookahead COMMAND ...`: the `spacy-lookahead` command (cli.py)."""
from .cli import app

if __name__ == "__main__":
    app(prog_name="python -m spacy_lookahead")

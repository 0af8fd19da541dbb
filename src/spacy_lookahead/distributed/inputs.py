"""What `annotate` reads: a JSONL file of {"text": ...} lines, a folder of
.txt files or a .spacy DocBin; cut into partitions of consecutive inputs.

Bad inputs (invalid JSON, no "text", undecodable files) are kept with their
line number or file name: reported, never dropped silently, and they do not
stop the run."""
import codecs
import gc
import hashlib
import pickle
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import srsly

# spaCy is imported where a DocBin is read or written: the client of a run
# on texts never loads it (on a 16-core machine, the client's imports were
# seconds of the command's fixed cost).


@dataclass
class Inputs:
    kind: str                      # "jsonl", "txt" or "docbin"
    # jsonl/txt: (text, user_data) per good input
    items: List[Tuple[str, Dict[str, Any]]] = field(default_factory=list)
    # where each good item comes from: its line number (jsonl, from 1), file
    # name (txt) or doc index (docbin)
    sources: List[Any] = field(default_factory=list)
    bad: List[Dict[str, Any]] = field(default_factory=list)
    checksum: str = ""
    docs: List[Any] = field(default_factory=list)  # the docs of a .spacy input


def check_input(path: Path) -> str:
    """The input's kind ("jsonl", "txt" or "docbin"), or the error that
    names what is wrong with the path (before anything starts)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"input {path} does not exist: give a .jsonl file, a folder of "
                                ".txt files or a .spacy DocBin.")
    if path.is_dir():
        if not any(f.is_file() and f.suffix.lower() == ".txt" for f in path.iterdir()):
            raise ValueError(f"input folder {path} has no .txt files.")
        return "txt"
    if path.suffix.lower() == ".spacy":
        return "docbin"
    if path.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    raise ValueError(f"input {path}: unknown kind (suffix {path.suffix!r}). Give a .jsonl file "
                     "of {\"text\": ...} lines, a folder of .txt files or a .spacy DocBin.")


def read_inputs(path: Path) -> Inputs:
    kind = check_input(path)
    read = {"txt": _read_txt_folder, "docbin": _read_docbin, "jsonl": _read_jsonl}[kind]
    with _no_cyclic_gc():
        return read(Path(path))


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Python's cycle collector off while the input is read: a read makes
    objects per input (texts, dicts, tuples) that all stay, and the
    collections it set off scanned them again and again (half the time of
    reading 250,000 JSON lines). They hold no cycles; the collector's
    state is restored after."""
    enabled = gc.isenabled()
    try:
        gc.disable()
        yield
    finally:
        if enabled:
            gc.enable()


def _read_jsonl(path: Path) -> Inputs:
    """Lines end at "\n" only (JSON Lines): a text may hold U+2028, U+0085
    or a form feed, which str.splitlines() would cut at. Each line is
    decoded strictly (a line that is not UTF-8 is a bad input, reported);
    a byte order mark at the start is read past."""
    data = path.read_bytes()
    out = Inputs("jsonl", checksum=hashlib.sha256(data).hexdigest())
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            line = raw.decode("utf8")
        except UnicodeDecodeError as err:
            out.bad.append({"line": number, "error": f"not UTF-8 ({err})"})
            continue
        if not line.strip():
            continue  # a blank line is no input
        try:
            record = srsly.json_loads(line)
        except ValueError as err:
            out.bad.append({"line": number, "error": f"invalid JSON ({err})"})
            continue
        if not isinstance(record, dict) or not isinstance(record.get("text"), str):
            out.bad.append({"line": number, "error": 'no "text" string'})
            continue
        text = record.pop("text")
        out.items.append((text, record))
        out.sources.append(number)
    return out


def _read_txt_folder(path: Path) -> Inputs:
    files = sorted(f for f in path.iterdir() if f.is_file() and f.suffix.lower() == ".txt")
    digest = hashlib.sha256()
    out = Inputs("txt")
    for file in files:
        data = file.read_bytes()
        digest.update(file.name.encode("utf8") + b"\0" + data)
        try:
            text = data.decode("utf-8-sig")  # (a byte order mark is no text)
        except UnicodeDecodeError as err:
            out.bad.append({"file": file.name, "error": f"not UTF-8 ({err})"})
            continue
        out.items.append((text, {"file": file.name}))
        out.sources.append(file.name)
    out.checksum = digest.hexdigest()
    return out


def _read_docbin(path: Path) -> Inputs:
    from spacy.tokens import DocBin
    from spacy.vocab import Vocab

    data = path.read_bytes()
    docs = list(DocBin(store_user_data=True).from_bytes(data).get_docs(Vocab()))
    return Inputs("docbin", checksum=hashlib.sha256(data).hexdigest(), docs=docs,
                  sources=list(range(len(docs))))


def n_inputs(inputs: Inputs) -> int:
    return len(inputs.sources)


def n_chars(inputs: Inputs) -> int:
    """The characters of all good inputs (a doc's: its text's)."""
    if inputs.kind == "docbin":  # (doc.text would join every token in Python)
        return sum(doc[-1].idx + len(doc[-1].text_with_ws) for doc in inputs.docs if len(doc))
    return sum(len(text) for text, _ in inputs.items)


def partition_payload(inputs: Inputs, start: int, end: int) -> Tuple[str, bytes]:
    """What a task annotates: the texts of inputs [start, end) with their
    user data, pickled, or the docs as DocBin bytes. Bytes, not a list:
    Dask walks a task's arguments element by element looking for futures,
    which cost the client more than pickling the texts (1.3 s of CPU a
    million tokens against 0.03 s)."""
    if inputs.kind != "docbin":
        return ("texts", pickle.dumps(inputs.items[start:end], protocol=pickle.HIGHEST_PROTOCOL))
    from spacy.tokens import DocBin

    return ("docbin", DocBin(docs=inputs.docs[start:end], store_user_data=True).to_bytes())


def payload_items(payload: Tuple[str, bytes], vocab) -> List[Tuple[Any, Dict[str, Any]]]:
    """(text or doc, user data) of each input of a partition_payload."""
    kind, data = payload
    if kind == "texts":
        return pickle.loads(data)
    from spacy.tokens import DocBin

    return [(doc, {}) for doc in DocBin(store_user_data=True).from_bytes(data).get_docs(vocab)]

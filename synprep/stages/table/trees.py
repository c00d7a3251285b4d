"""Tree agreement: a transition decoder's trees against the target-side parser's parse
of the decoder's own words (UAS/LAS)."""

from __future__ import annotations

import os
from typing import Optional

from ...errors import ConfigError
from ...parsers.evaluate import evaluate as evaluate_parse
from ...syntax.conllu import format_conllu, read_conllu
from ...util.outputs import atomic_file


def tree_agreement(hyps_conllu: str, out_prefix: str, parser) -> Optional[dict]:
    """How often a transition decoder's trees agree with the workflow's target-side parser
    on the words the decoder generated (bench/paper.py's ``--tree-agreement``, moved
    here): the decoder's trees (``hyps_conllu``, written by ``synprep evaluate``) are
    parsed again by ``parser`` (a :class:`synprep.parsers.Parser` made with
    ``pretokenized=True`` and no word limit), their words as given (one whitespace-free
    token a word), and the decoder's trees are scored against that parse (``synprep
    eval-parse``'s scoring, by sentence id): UAS/LAS over every word and without
    punctuation. Writes ``<out_prefix>.trees.conllu`` (the decoder's trees scored) and
    ``<out_prefix>.reparsed.conllu`` (the parser's). None when there are no trees (not a
    transition decoder); sentences without words are counted and left out."""
    if not os.path.exists(hyps_conllu):
        return None
    sents = list(read_conllu(hyps_conllu))
    trees = [s for s in sents if len(s)]
    for s in trees:  # a generated word may hold spaces: the parser reads it without them, and so is it scored
        for row in s.rows:
            row[1] = "".join(row[1].split()) or "_"
    mine, theirs = f"{out_prefix}.trees.conllu", f"{out_prefix}.reparsed.conllu"
    with atomic_file(mine) as f:
        f.write("".join(format_conllu(s) for s in trees))
    items = [(s.sent_id, " ".join(s.forms)) for s in trees]
    with atomic_file(theirs) as f:
        for res in parser.parse(items):
            if res.conllu is None:
                raise ConfigError(f"{hyps_conllu}: the parser rejected sentence {res.id} ({res.reject})")
            f.write(res.conllu)
    if not trees:  # no tree with words: eval-parse's scoring refuses nothing to score; the table's figures as before
        return {"sentences": 0, "empty": len(sents), "words": 0, "UAS": 0.0, "LAS": 0.0, "UAS_nopunct": 0.0,
                "LAS_nopunct": 0.0}
    got = evaluate_parse(mine, theirs, by_id=True).as_dict()
    return {"sentences": len(trees), "empty": len(sents) - len(trees), "words": got["all"]["gold_words"],
            "UAS": got["all"]["UAS"], "LAS": got["all"]["LAS"],
            "UAS_nopunct": got["without_punct"]["UAS"], "LAS_nopunct": got["without_punct"]["LAS"]}

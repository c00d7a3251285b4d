"""``synprep gate-stats``: summarize the gate norms of ``synprep translate
--gate-norms`` (004 §6, Eq. 17) by target part of speech: the mean norm by UPOS, at
EOS, and on which UPOS each sentence's highest norm falls (:mod:`synprep.analysis.gates`).

The UPOS come from a CoNLL-U file with the same sentences and words: the parsed
target side the dataset was made from (gate norms of the references), or the
hypotheses parsed as tokenized (``--tokens FILE`` writes them for ``synprep parse
--pretokenized``).
"""

from __future__ import annotations

import argparse
import sys

from ..analysis.gates import summarize, write_tokens
from ..dataset.shard_config import ShardConfig
from ..errors import ConfigError
from ..flags import add_settings
from ..stages.analysis import write_json


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("gates", "conllu")
OUTPUTS = ("tokens", "json")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--gates", required=True, metavar="TSV", help="the gate norms (synprep translate --gate-norms)")
    p.add_argument("--conllu", metavar="CONLLU", help="target trees with UPOS, one a TSV sentence, same words")
    # the word level of --conllu matched against the TSV's words: the shards' (synprep.dataset.shard_config)
    add_settings(p, ShardConfig, only=["words"], defaults="class")
    p.add_argument("--tokens", metavar="TXT", help="write the TSV's words, one sentence a line (for synprep parse --pretokenized)")
    p.add_argument("--json", metavar="FILE", help="also write the summary as JSON here (synprep report html --gates)")


def run(args: argparse.Namespace) -> int:
    if not args.conllu and not args.tokens:
        raise ConfigError("give --conllu (to summarize by UPOS) or --tokens (to write the words for parsing)")
    if args.tokens:
        n = write_tokens(args.gates, args.tokens, allow_empty=False)
        print(f"synprep gate-stats: wrote the words of {n} sentences to {args.tokens}", file=sys.stderr)
    if not args.conllu:
        return 0
    res = summarize(args.gates, args.conllu, words=args.words, allow_empty=False)
    if args.json:
        write_json(args.json, res)
    print(format_table(res))
    return 0


def format_table(res: dict) -> str:
    lines = [
        f"{res['sentences']} sentences, {res['words']} words; mean gate norm {res['mean']} (EOS: {res['eos']['mean']})"
        + (f"; {res['conllu_sentences_not_in_gates']} sentence(s) of the CoNLL-U without gate norms passed over (by "
           "sent_id: the dataset's rejects)" if res["conllu_sentences_not_in_gates"] else ""),
        f"{'UPOS':<8} {'words':>7} {'mean z':>8} {'highest in sentence':>20}",
    ]
    for u, r in res["by_upos"].items():
        lines.append(f"{u:<8} {r['words']:>7} {r['mean']:>8.4f} {r['highest_in_sentence']:>20}")
    return "\n".join(lines)

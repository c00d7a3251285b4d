"""Snakemake script: the contrastive suite of the table's evaluation sets
(synprep.analysis.contrastive: the target language's rules over the sets' parses, forms
from the training shards' target parses; insertions and deletions parsed again by the
workflow's target parser)."""

import sys

from synprep import parsers
from synprep.analysis.contrastive import build_lexicon, make_suite, parser_reparse, rules_for, write_suite


def main(sm) -> None:
    log = sys.stderr = open(sm.log[0], "w", buffering=1)  # tracebacks too go to the rule's log
    language = rules_for(sm.params.lang)
    lexicon = build_lexicon(list(sm.input.train))
    pairs = [{"src": s, "tgt": t} for s, t in zip(sm.input.src, sm.input.tgt)]
    backend = parsers.backend(sm.params.backend)
    # the contrastive's words, as given; the backend's share of this job's threads (Parser.job_options)
    opts = backend.job_options({**dict(sm.params.parser), "pretokenized": True, "max_words": 0}, sm.threads)  # 0: no limit
    with backend(**opts) as parser:
        suite = make_suite(pairs, lexicon, language, parser_reparse(parser))
    write_suite(sm.output.suite, suite)
    s = suite.summary
    print(f"{s['items']} items of {s['references']} references, {s['errors']} contrastive pairs", file=log)
    for t, c in s["types"].items():
        print(f"{t}: {c['errors']} pairs, skipped {c['skipped_total']} {c['skipped']}", file=log)


# only when snakemake runs this file (the udpipe workers import the main module again)
if __name__ == "__main__":
    main(snakemake)  # noqa: F821  (injected by snakemake)

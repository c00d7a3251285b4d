# The output root, used by every stage file (included first by the Snakefile).
#
# Every file the workflow writes lies under `outdir` (default results/): the stages'
# outputs, logs/ and benchmarks/. Another corpus gets another outdir, so that its run
# neither overwrites nor resumes the demo's (config/README.md, "outdir").

OUT_DIR = SETTINGS.outdir.rstrip(os.sep) or os.curdir


def out_path(path):
    """``path`` under the output root (config ``outdir``)."""
    return os.path.join(OUT_DIR, path)

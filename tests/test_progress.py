"""synprep.util.progress: a tqdm bar on a terminal, plain lines in a log, silence on request."""

from __future__ import annotations

import io
import re

from synprep.util.progress import LineProgress, progress


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_lines_every_n_items_with_rate_and_eta():
    out, clock = io.StringIO(), Clock()
    bar = LineProgress(10, "translate", "sent", out, every=4, clock=clock)
    for _ in range(10):
        clock.t += 0.5
        bar.update(1)
    bar.set_postfix(loss=1.5)
    bar.close()
    bar.close()  # closing twice writes one last line
    lines = out.getvalue().splitlines()
    assert lines == [
        "translate: 4/10 sent (40%), 2 sent/s, 0:02 elapsed, ETA 0:03",
        "translate: 8/10 sent (80%), 2 sent/s, 0:04 elapsed, ETA 0:01",
        "translate: 10 sent in 0:05 (2 sent/s), loss 1.5",
    ]


def test_lines_every_interval_without_a_total():
    out, clock = io.StringIO(), Clock()
    bar = LineProgress(None, "validation", "batch", out, interval=30.0, clock=clock, initial=0)
    for _ in range(5):
        clock.t += 20.0  # a batch every 20 s: a line at 40 s and 80 s
        bar.update(1)
    assert out.getvalue().splitlines() == [
        "validation: 2 batch, 20 s/batch, 0:40 elapsed",
        "validation: 4 batch, 20 s/batch, 1:20 elapsed",
    ]


def test_a_resumed_count_rates_only_the_new_items():
    out, clock = io.StringIO(), Clock()
    bar = LineProgress(100, "vanilla", "upd", out, initial=60, every=20, clock=clock)
    clock.t += 10.0
    bar.update(20)
    assert out.getvalue() == "vanilla: 80/100 upd (80%), 2 upd/s, 0:10 elapsed, ETA 0:10\n"


def test_an_inner_bar_writes_a_last_line_only_after_another():
    out, clock = io.StringIO(), Clock()
    quick = LineProgress(3, "validation", "batch", out, leave=False, clock=clock)
    quick.update(3)
    quick.close()
    assert out.getvalue() == ""
    slow = LineProgress(3, "validation", "batch", out, leave=False, clock=clock)
    clock.t += 31.0
    slow.update(1)
    slow.close()
    assert out.getvalue().splitlines()[-1] == "validation: 1 batch in 0:31 (31 s/batch)"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_mode_follows_the_stream_and_no_progress_silences_it(capsys, monkeypatch):
    with progress(3, desc="translate", unit="sent") as bar:  # captured stderr is not a terminal
        bar.update(3)
    assert re.fullmatch(r"translate: 3 sent in 0:00 \(.* sent/s\)\n", capsys.readouterr().err)
    with progress(3, desc="translate", unit="sent", enabled=False) as bar:
        bar.update(3)
        bar.set_postfix(x=1)
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("SYNPREP_PROGRESS_INTERVAL", "0")  # a line at every update
    with progress(3, desc="parse", unit="sent") as bar:
        bar.update(1)
        bar.update(1)
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(", ")[0] for line in lines] == ["parse: 1/3 sent (33%)", "parse: 2/3 sent (67%)", lines[2]]
    assert lines[2].startswith("parse: 2 sent in 0:00 (")
    term = Terminal()
    with progress(3, desc="translate", unit="sent", file=term) as bar:
        bar.update(3)
    assert type(bar).__name__ == "tqdm" and "\r" in term.getvalue() and "3/3" in term.getvalue()


def test_a_workflow_jobs_bar_lines_reach_the_terminal_and_everything_the_log():
    """Issue 32: training progress only in logs/train_model/<run>.log left the terminal at
    "31 of 35 steps done" for minutes; the train_model job's stderr (ProgressEcho) sends
    its bar's lines (update, loss, ETA) to the terminal as well."""
    from synprep.util.progress import ProgressEcho

    log, terminal = io.StringIO(), io.StringIO()
    stream = ProgressEcho(log, terminal, ["parent"], prefix="train_model p: ")
    assert not stream.isatty()
    t = [0.0]
    bar = progress(10, desc="parent", unit="upd", file=stream, interval=30)
    assert isinstance(bar, LineProgress)  # line mode: the stream is no terminal
    bar.clock = lambda: t[0]
    bar.t0 = bar.last = 0.0
    bar.set_postfix(loss=5.25)
    for _ in range(4):
        t[0] += 10
        bar.update()
    stream.write("validation: 3/4 batch (75%)\nsome warning from a library\n")
    stream.write("parent: half a li")  # a line arrives in pieces: echoed once whole
    stream.write("ne\n")
    bar.close()
    echoed = terminal.getvalue().splitlines()
    assert echoed[0].startswith("train_model p: parent: 3/10 upd (30%), ") and "ETA 1:10" in echoed[0]
    assert echoed[0].endswith(", loss 5.25")
    assert echoed[1] == "train_model p: parent: half a line"
    assert echoed[2].startswith("train_model p: parent: 4 upd in 0:40") and len(echoed) == 3
    assert "some warning from a library" in log.getvalue() and "validation: 3/4" in log.getvalue()
    assert log.getvalue().count("parent: ") == 3  # the log has every line, the echoed ones too

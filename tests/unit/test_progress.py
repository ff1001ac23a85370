"""The progress bar of long commands: drawn on a terminal, plain lines elsewhere (logs, pipes, --json)."""

import shutil
import subprocess
import sys
import time

import pytest

from synthrisk.release_audit.progress_bar import StepProgress


def steps(progress: StepProgress, n: int) -> None:
    with progress:
        for i in range(1, n + 1):
            progress.announce(f"[{i}/{n}] measure{i} ...")
            progress.announce(f"[{i}/{n}] measure{i}: ok, 0.0 s")


def test_without_a_terminal_each_step_is_a_line(capsys):
    lines = []
    steps(StepProgress(2, lines.append), 2)  # stderr is captured: not a terminal
    assert lines == ["[1/2] measure1 ...", "[1/2] measure1: ok, 0.0 s", "[2/2] measure2 ...", "[2/2] measure2: ok, 0.0 s"]
    assert capsys.readouterr().err == ""


def test_a_forced_bar_counts_steps_and_estimates_the_time_left(capsys):
    lines = []
    steps(StepProgress(2, lines.append, enabled=True), 2)
    err = capsys.readouterr().err
    assert lines == [] and "2/2" in err and "left]" in err and "synthrisk: [1/2] measure1: ok" in err


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_bar_is_drawn_in_a_real_terminal(tmp_path):
    script = tmp_path / "demo.py"
    script.write_text("import time\nfrom synthrisk.release_audit.progress_bar import StepProgress\n"
                      "with StepProgress(3, print) as p:\n"
                      "    for i in range(3):\n"
                      "        p.announce(f'[{i+1}/3] m{i} ...'); time.sleep(0.4); p.announce(f'[{i+1}/3] m{i}: ok')\n")
    session = f"synthrisk-bar-{time.time_ns()}"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "10",
                    f"{sys.executable} {script}; sleep 30"], check=True)
    try:
        # the script imports the audit package first: on a loaded machine that takes seconds
        deadline, screen = time.monotonic() + 30, ""
        while time.monotonic() < deadline and "synthrisk: [3/3] m2: ok" not in screen:
            time.sleep(0.5)
            screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True,
                                    text=True).stdout
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    assert "3/3" in screen and "left]" in screen and "synthrisk: [3/3] m2: ok" in screen, screen

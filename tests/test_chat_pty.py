"""Drive the installed `rag chat` through a real pseudo-terminal (offline mode, seed index)."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

RAG = Path(sys.executable).parent / "rag"
PROMPT = r"›(?:\x1b\[0m)? "
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")


needs_rag = pytest.mark.skipif(not RAG.exists(), reason="the rag console script is not installed in this venv")


def _spawn(seed_index, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "OPENAI_"))}
    env.update(RAG_INDEX_DIR=seed_index.index_dir, RAG_DATA_DIR=seed_index.data_dir, RAG_ANSWER_MODE="offline",
               XDG_STATE_HOME=str(tmp_path / "state"), TERM="xterm-256color", COLUMNS="100", LINES="40")
    child = pexpect.spawn(str(RAG), ["chat"], env=env, cwd=str(tmp_path), encoding="utf-8",
                          dimensions=(40, 100), timeout=60)
    child.expect("Ctrl-D to leave")
    child.expect(PROMPT)
    return child


def _ask(child, line: str) -> str:
    """Send one line and return what was printed before the next prompt, without colours."""
    child.sendline(line)
    child.expect(PROMPT)
    return ANSI.sub("", child.before)


@needs_rag
def test_chat_in_a_terminal(seed_index, tmp_path):
    child = _spawn(seed_index, tmp_path)
    try:
        child.sendline("What does RoboRefer do?")
        child.expect(PROMPT)
        first = ANSI.sub("", child.before)
        assert "we propose RoboRefer" in first and "[1] RoboRefer" in first and "similarity" in first

        child.sendline("what dataset did it use?")
        child.expect(PROMPT)
        follow_up = ANSI.sub("", child.before)
        assert "↳ searching: What dataset did RoboRefer use?" in follow_up
        assert "RefSpatial" in follow_up

        child.sendline("/sources")
        child.expect(PROMPT)
        sources = ANSI.sub("", child.before)
        assert "[1] RoboRefer" in sources and "txt" in sources  # header with the source file
        assert "cluttered real-world" in " ".join(sources.split())  # the abstract's last words: shown in full

        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    history = (tmp_path / "state" / "rag" / "chat_history").read_text(encoding="utf-8").splitlines()
    assert history[-4:] == ["What does RoboRefer do?", "what dataset did it use?", "/sources", "/exit"]


@needs_rag
def test_a_new_chinese_question_is_not_tied_to_the_previous_paper(seed_index, tmp_path):
    """Issue 13: a "which paper" question in Chinese after a question about QSHNN."""
    child = _spawn(seed_index, tmp_path)
    try:
        first = _ask(child, "What does QSHNN propose?")
        assert "[1] QSHNN" in first
        second = _ask(child, "哪篇论文使用触觉信号来提高机器人灵巧性？")
        assert "searching" not in second and "QSHNN" not in second  # not rewritten, QSHNN not even retrieved
        assert "[1] RoTO" in second and "tactile" in second
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close()


@needs_rag
def test_what_about_x_answers_about_x(seed_index, tmp_path):
    """Issue 13: "what about XVerse?" after a DISCO question quotes XVerse, not DISCO."""
    child = _spawn(seed_index, tmp_path)
    try:
        first = _ask(child, "What does DISCO replace in diffusion guidance?")
        assert "[1] DISCO" in first
        second = _ask(child, "what about XVerse?")
        assert "↳ searching: What does XVerse do?" in second
        answer = second.split("offline mode")[0]
        assert "XVerse" in answer and "DISCO" not in answer and "guidance" not in answer
        assert "[1] XVerse" in second and "[2] DISCO" not in second
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close()

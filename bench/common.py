"""What the benchmarks share: the question list and a percentile (imported by run.py and scale.py)."""
from __future__ import annotations

QUESTIONS = [
    "Which paper proposes a benchmark for tactile manipulation?",
    "How does BraVE handle large discrete action spaces?",
    "What does RoboRefer do?",
    "Which papers use reinforcement learning to fine-tune a vision-language model?",
    "哪篇论文研究视频中的时间方向？",
    "What is the sample complexity of the single-timescale actor-critic algorithm?",
    "Who are the authors of DynamicRAG?",
    "How many denoising steps does T2I-R1 use?",
]


def pct(values: list[float], p: float) -> float:
    """The p-th percentile (nearest rank) of values."""
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]

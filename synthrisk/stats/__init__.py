"""The statistics every method shares: exact intervals for a proportion (`proportions`), Holm and
Benjamini-Hochberg (`multiple_testing`), where the noise of every DP mechanism comes from
(`noise`), and the seeded samples of records (`sampling`)."""

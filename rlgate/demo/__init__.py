"""The offline demo: generated GSM8K/MMLU-Pro/IFEval-format data, two tiny trained checkpoints, a real `check`."""

"""Data integrity, not badcases: does the evaluation data occur in the training data?

Long shared n-grams (`ngrams`) between each task's documents (`sources`) and the training files,
indexed once (`index`), judged as gates (`contamination_gates`) beside the contract's own; `api`
runs it as the contract states it. Private documents are counted, never shown.
"""

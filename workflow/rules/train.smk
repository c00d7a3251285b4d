# Stage train: the final rule, one training run per configured variant.
#
# Each run trains on results/shards/ and writes results/train/{run}/ (checkpoints,
# metrics log, scores); the report plots the training curves and scores.

TRAIN_RUNS = config["train"]["variants"]
TRAIN_REPORT_INPUT = {}

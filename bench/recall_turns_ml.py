"""A third half of agent turns for recall (``bench/bench_recall_turns.py``): an ML platform project.

Written in the shape of ``proxy/eval/turns_heldout.py`` (facts each turn needs, distractors sharing the
turns' words, turns that need nothing) before the chance floor was tried, and read only through the
bench: a check on values chosen on the dev half, beside the old held-out half (read since).
Only the user's words matter to recall, so the rule files and summary are short."""
PROJECT = "mlp"
FACTS = {
    "gpu-quota": ("Each team's GPU quota is 16 A100s on the train-a100 Slurm partition.", "train-a100"),
    "registry": ("Trained models are registered in MLflow at mlflow.ml.internal under the name pattern team/model.",
                 "mlflow.ml.internal"),
    "dataset-path": ("The labelled click dataset lives in gs://ml-data/clicks/v7/ and is refreshed on the 1st of "
                     "each month.", "clicks/v7/"),
    "seed": ("Offline evaluation uses seed 1337 and the frozen eval split eval_2026q3.", "eval_2026q3"),
    "owner": ("Marta Lindqvist owns the feature store and signs off on every new feature definition.",
              "Marta Lindqvist"),
    "serving-timeout": ("The model server answers within 120 ms or the ranker falls back to the popularity "
                        "baseline.", "popularity baseline"),
    "batch-size": ("The embedding job must run with batch size 256; larger batches overflow the 40 GB cards.",
                   "batch size 256"),
    "pii": ("User ids are hashed with the rotating salt from Vault path ml/salt before any export leaves the "
            "cluster.", "ml/salt"),
    "notebook": ("Shared notebooks run on JupyterHub at hub.ml.internal; idle kernels are culled after 2 hours.",
                 "culled after 2 hours"),
    "canary": ("A new ranker goes to 5% of traffic for 48 hours before full rollout.", "5% of traffic"),
    "cuda": ("The training images are pinned to CUDA 12.2 because the custom attention kernel breaks on 12.4.",
             "CUDA 12.2"),
    "feature-ttl": ("Online features expire from Redis after 6 hours (FEATURE_TTL_S=21600).", "FEATURE_TTL_S"),
}
DISTRACTORS = (
    "The GPU nodes are patched on the second Tuesday of each month.",
    "MLflow runs older than a year are archived to cold storage.",
    "The click dataset's schema is documented in docs/data/clicks.md.",
    "Evaluation dashboards are in Grafana under the ML folder.",
    "The feature store's UI shows lineage for each feature.",
    "The ranker's latency is graphed on the serving dashboard.",
    "The embedding model is retrained every quarter.",
    "Exports to partners are sent weekly by the data team.",
    "JupyterHub users get a 50 GB home directory.",
    "Rollout announcements go to the #ml-releases channel.",
    "Docker images are built by Cloud Build on every merge.",
    "Redis memory alerts page the platform on-call.",
)
CLAUDE_MD = "# ML platform\n- Run make test before pushing.\n- Training jobs are submitted with sbatch.\n"
AGENTS_MD = "# ML: agent rules\n- Keep answers short.\n- Configs live in configs/.\n"
SUMMARY = "Summary:\n1. Primary request: speed up the data loader.\n2. Done: added prefetching.\n3. Pending: nothing."
DATA_LOG = "\n".join(f"2026-12-02T09:{m:02d}:00Z ERROR loader FileNotFoundError: gs://ml-data/clicks/v6/part-{m:04d}"
                     ".parquet" for m in range(0, 20))
FEAT_LOG = "\n".join(f"2026-12-02T14:{m:02d}:31Z WARN feature_client miss user=u{m}81 keys=12 (online store)"
                     for m in range(0, 20))
TURNS = (
    ("gpu-quota", "claude", "My training job has been pending in the queue for six hours. Can you check the submit "
     "script in jobs/train.sbatch and tell me how many GPUs our team is actually allowed to ask for? I asked for "
     "32.", None),
    ("registry", "codex-tool", "Register the new ranker checkpoint so the serving team can pick it up. Do it the way "
     "the other models are registered.", ("ls checkpoints/", "ranker-2026-12-01/\nranker-2026-11-24/\n")),
    ("dataset-path", "claude-log", "The training script crashes while loading data, see below. Where is the click "
     "dataset supposed to be read from?\n\n" + DATA_LOG, None),
    ("seed", "codex", "I want to compare my new model against last quarter's numbers. Write the evaluation script in "
     "eval/compare.py so the results are comparable with what we reported before; which split and seed should it "
     "use?", None),
    ("owner", "claude-after-compact", "Next I'll add the user_tenure feature to the feature store. Who has to sign "
     "off on it?", None),
    ("serving-timeout", "claude", "Product asks what happens to the recommendations when the model server is slow. "
     "I need to explain the fallback in the design doc; what does the ranker do and after how long?", None),
    ("batch-size", "claude-tool", "The embedding job keeps dying with CUDA out of memory on the new cluster. Find out "
     "what's wrong and fix the job config.", ("cat jobs/embed.yaml", "model: e5-large\nbatch_size: 1024\n")),
    ("pii", "codex", "The partner wants an export of user engagement for last month. Write the export job and make "
     "sure it handles the user ids the way we're required to.", None),
    ("notebook", "claude", "My notebook on the shared hub lost all its state over lunch again. Is something killing "
     "it?", None),
    ("canary", "codex", "The new ranker passed offline eval. How do we roll it out to users, what's the usual "
     "procedure?", None),
    ("cuda", "claude", "Can you bump the base image in docker/train.Dockerfile to the latest CUDA? The new PyTorch "
     "release wants it. Or is there a reason we're on the old one?", None),
    ("feature-ttl", "claude-log", "Online features come back empty for users who were active this morning, log "
     "below. How long are features kept online?\n\n" + FEAT_LOG, None),
)
NULL_TURNS = (
    ("claude", "Add type hints to utils/metrics.py and fix whatever mypy complains about.", None),
    ("codex", "Explain the difference between precision and recall at k with a small example.", None),
    ("claude-log", "What does this warning mean?\n\nUserWarning: The given NumPy array is not writable, and "
     "PyTorch does not support non-writable tensors.", None),
    ("codex-tool", "Rename the config key lr_warmup to warmup_steps everywhere.",
     ("rg -n lr_warmup", "configs/base.yaml:12:lr_warmup: 500\n")),
)

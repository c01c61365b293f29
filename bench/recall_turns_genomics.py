"""Recall turns for a genomics sequencing pipeline project, ``helixrun``.

A dev half written by an engineer who read neither recall's code nor any
result: invented project facts, look-alike distractors, and agent turns that
each need exactly one stored fact (plus null turns that need none).
"""
from __future__ import annotations

PROJECT = "helixrun"

FACTS = {
    "lims_port": (
        "The LIMS Django dev server listens on port 8742, not 8000; `make lims-dev` binds it and the "
        "Nextflow on-complete callbacks in conf/local.config point at it.",
        "port 8742",
    ),
    "cram_bucket": (
        "Raw FASTQ lands in bucket `hx-raw-fastq-eu1`; aligned CRAMs are published to `hx-aligned-cram-eu1`. "
        "Never write alignments into the raw bucket.",
        "hx-aligned-cram-eu1",
    ),
    "highmem_partition": (
        "Nextflow processes labelled `high_mem` are routed to the Slurm partition `hm-768` (36h max walltime); "
        "the default `compute` partition caps jobs at 12h.",
        "hm-768",
    ),
    "qc_coverage": (
        "A WGS sample fails QC when mean coverage is below 28x or the duplication rate exceeds 18%; "
        "the dashboard shows amber for anything between 28x and 32x.",
        "below 28x",
    ),
    "cram_reference": (
        "All CRAMs are encoded against `GRCh38_full_analysis_set_plus_decoy_hla.fa`; decoding them with any other "
        "FASTA gives silently wrong bases instead of an error.",
        "plus_decoy_hla",
    ),
    "conda_lockfile": (
        "Environments are built with mamba from the pinned lockfile `envs/helix-core.lock.yml`; plain "
        "`conda env update` against environment.yml is banned because it drags bcftools past 1.17.",
        "helix-core.lock.yml",
    ),
    "s3_endpoint_var": (
        "The pipeline reads the object-storage endpoint from `HELIX_S3_ENDPOINT`; `AWS_ENDPOINT_URL_S3` has been "
        "ignored since the boto3 wrapper rewrite.",
        "HELIX_S3_ENDPOINT",
    ),
    "varcall_owner": (
        "The variant-calling stage (DeepVariant + GLnexus) is owned by Priya Raghunathan; any change to its params "
        "or container tags needs her review.",
        "Priya Raghunathan",
    ),
    "flaky_plate_test": (
        "`tests/lims/test_barcodes.py::test_plate_reuse` is known-flaky between 23:55 and 00:05 UTC because plate "
        "IDs embed the date; just rerun it, don't chase it.",
        "test_plate_reuse",
    ),
    "consent_restricted": (
        "Samples with consent code `C3-RESTRICTED` must never leave on-prem storage; every sync to the cloud mirror "
        "has to filter on `consent_code` first.",
        "C3-RESTRICTED",
    ),
    "scratch_purge": (
        "Nextflow work dirs under `/scratch/helix/work` are purged by cron every Sunday 03:00 UTC; anything you need "
        "later must be published to S3 before then.",
        "Sunday 03:00",
    ),
    "snakemake_frozen": (
        "The legacy Snakemake tree under `legacy/snakemake/` is frozen; only the RNA-seq rule `star_align` still runs "
        "in production, until the Nextflow port ships.",
        "star_align",
    ),
    "sample_id_format": (
        "Sample IDs are `HX-<YY><site>-<5-digit serial>`, e.g. HX-24CB-00417; the LIMS validator rejects lowercase "
        "and serials shorter than five digits.",
        "HX-24CB-00417",
    ),
    "dashboard_host": (
        "The Streamlit QC dashboard runs on host `hpc-svc-03`, port 8611, behind oauth2-proxy at qc.helix.internal.",
        "hpc-svc-03",
    ),
    "nextflow_pin": (
        "Nextflow is pinned with `NXF_VER=23.10.1`; 24.x breaks our DSL2 workaround for the per-lane channel merge.",
        "NXF_VER=23.10.1",
    ),
    "queue_size": (
        "Slurm allows 400 queued jobs per user, so `executor.queueSize` is set to 350 to leave headroom for "
        "interactive srun sessions.",
        "executor.queueSize",
    ),
    "cram_archive_decision": (
        "Decision: the long-term archive is CRAM only, lossless with no quality binning; BAMs are deleted 30 days "
        "after alignment.",
        "no quality binning",
    ),
    "lims_migrations": (
        "LIMS runs on Postgres 15 (`lims-db-01`, db `helix_lims`); migrations must be run with `--database=primary` "
        "because the default alias points at the read replica used by reports.",
        "--database=primary",
    ),
    "joint_calling_schedule": (
        "Cohort joint genotyping runs on the 1st and 15th of each month; ad-hoc reruns need sign-off in #helix-varcall.",
        "1st and 15th",
    ),
    "lims_token_vault": (
        "The LIMS bot token Nextflow uses (`HELIX_LIMS_TOKEN`) rotates every 90 days and lives in Vault at "
        "`secret/helix/lims-bot`.",
        "secret/helix/lims-bot",
    ),
    "contamination_gate": (
        "A VerifyBamID2 FREEMIX above 0.03 marks a sample as contaminated and blocks release, whatever its coverage.",
        "FREEMIX above 0.03",
    ),
    "refs_root": (
        "Reference bundles live read-only at `/refs/helix/` on Lustre; never copy them into work dirs, resolve them "
        "through `params.refs_root`.",
        "/refs/helix/",
    ),
}

DISTRACTORS = (
    "The LIMS Django app uses django-simple-history to keep an audit trail on the Sample and Plate models.",
    "The Streamlit QC dashboard caches parsed MultiQC JSON for ten minutes with st.cache_data.",
    "Slurm accounting data is exported nightly to a Grafana board that the HPC team maintains.",
    "Every CRAM is uploaded together with its .crai index under the same object prefix.",
    "The variant-calling stage emits per-sample gVCFs plus a cohort VCF annotated with VEP 110.",
    "Legacy Snakemake rules declare a separate conda env per rule through the `conda:` directive.",
    "Developers clean old Nextflow work directories by hand with `nextflow clean -f -before <run>`.",
    "mamba comes from a Miniforge install in /opt/miniforge on the cluster login nodes.",
    "An S3 lifecycle rule moves objects older than 180 days in the raw bucket to the cold storage class.",
    "Consent withdrawals are recorded in the LIMS as ConsentEvent rows and handled by the data-protection officer.",
    "QC metrics shown on the dashboard are computed by MultiQC from the Picard and mosdepth outputs.",
    "Tube barcodes are Code128 and map one-to-one onto LIMS sample records.",
    "GRCh37 bundles are still kept for re-analysis of old cohorts, but no new runs use them.",
    "DeepVariant runs the WGS model that ships with release 1.6.0.",
    "Nextflow timeline and trace reports are attached to each run page on the QC dashboard.",
    "Users ssh to the login node `hpc-login-01` before launching Nextflow on the cluster.",
    "The LIMS exposes a REST API under /api/v2/ which Nextflow calls to mark runs started and finished.",
    "The dashboard shows the contamination estimate in its own column next to mean coverage.",
)

CLAUDE_MD = """# helixrun — agent rules
- Run `make test` before proposing a commit; lint with `ruff check .`.
- Nextflow modules live in `modules/`, one process per file, DSL2 only.
- Don't touch `legacy/` unless the task explicitly says so.
- Never print sample-level data (names, DOB, MRNs) into logs or PR text.
"""

AGENTS_MD = """# AGENTS.md
- Python 3.11, Django 4.2 for the LIMS, Streamlit for the dashboard.
- Use `pytest -q tests/<area>` to keep test runs short.
- Keep PRs small; one pipeline stage per PR.
- Ask before changing anything under `conf/cluster*.config`.
"""

SUMMARY = (
    "Summary:\n"
    "1. Primary request: refactor the MultiQC report parser in `dashboard/parsers/multiqc.py` into smaller "
    "functions and add type hints.\n"
    "2. Done: split `parse_report` into `load_json`, `extract_general_stats` and `to_frame`; added tests in "
    "`tests/dashboard/test_multiqc_parser.py` (12 passing); fixed a KeyError on reports without the Picard section.\n"
    "3. Pending: update the dashboard README with the new function names; maybe cache `load_json`."
)

TURNS = (
    # lims_port
    ("lims_port", "claude",
     "I'm running the LIMS locally to test the new run-status webhook in `lims/runs/views.py`, but the Nextflow "
     "callback from my laptop run just hangs. I started it with `python manage.py runserver` like any Django app. "
     "Which port is it actually supposed to be on so the callbacks reach it?",
     None),
    ("lims_port", "codex-tool",
     "callbacks from nextflow aren't landing on my local lims, what's wrong",
     ("curl -sS -X POST http://localhost:8000/api/v2/runs/HXR-0193/complete",
      "curl: (7) Failed to connect to localhost port 8000 after 0 ms: Connection refused")),
    # cram_bucket
    ("cram_bucket", "claude",
     "Add a `publish_alignments` step to `modules/align/bwamem2.nf` that pushes the final CRAM + crai to object "
     "storage. What's the right destination bucket? I don't want to guess and end up writing to the FASTQ one.",
     None),
    ("cram_bucket", "claude-after-compact",
     "ok new thing — the downstream team says they can't find last week's aligned files. where exactly should "
     "those have been published?",
     None),
    # highmem_partition
    ("highmem_partition", "claude-log",
     "GLnexus keeps getting killed at exactly 12 hours. How do I get it onto the partition that allows longer jobs?\n\n"
     "```\nslurmstepd: error: *** JOB 4418821 ON cn-112 CANCELLED AT 2026-11-30T14:02:11 DUE TO TIME LIMIT ***\n"
     "[nf-core] ERROR ~ Error executing process > 'JOINT_GENOTYPE (cohort_b7)'\n"
     "Caused by: Process `JOINT_GENOTYPE (cohort_b7)` terminated with an error exit status (140)\n```",
     None),
    ("highmem_partition", "codex",
     "which slurm partition do the high_mem labelled processes go to and what's its walltime? need it for conf/cluster.config",
     None),
    # qc_coverage
    ("qc_coverage", "claude",
     "I'm writing the pass/fail column for `dashboard/pages/02_samples.py`. Right now it just colours by "
     "mosdepth mean depth with a hardcoded 30. What's our real cutoff for a failing WGS sample, and is there a "
     "dup-rate condition too?",
     None),
    ("qc_coverage", "claude-tool",
     "Is HX-25LD-01102 a QC fail or just amber? The PI is asking.",
     ("python scripts/sample_metrics.py HX-25LD-01102",
      "sample          mean_cov  pct_dup  freemix\nHX-25LD-01102   26.4      0.112    0.004")),
    # cram_reference
    ("cram_reference", "claude-log",
     "samtools view on a published CRAM gives garbage mismatches in IGV. Which FASTA should I be decoding with?\n\n"
     "```\n$ samtools view -T /tmp/hg38.fa HX-24CB-00233.cram chr6:29900000-29910000 | head -2\n"
     "[W::cram_decode_slice] MD5 for reference chr6 does not match, possible corruption\n```",
     None),
    ("cram_reference", "codex",
     "writing a small cram->fastq converter for the collaborators. what reference do our crams need to be decoded against?",
     None),
    # conda_lockfile
    ("conda_lockfile", "claude-tool",
     "The bcftools in my env is suddenly 1.19 and the norm step output changed. How are we supposed to build the env?",
     ("conda env update -f envs/environment.yml && bcftools --version | head -1",
      "Collecting package metadata (repodata.json): done\nSolving environment: done\n...\nbcftools 1.19")),
    ("conda_lockfile", "codex",
     "recreate the core env on the new login node, what's the proper command / file",
     None),
    # s3_endpoint_var
    ("s3_endpoint_var", "claude-log",
     "Uploads are going to real AWS instead of our on-prem MinIO even though I exported the endpoint. Why?\n\n"
     "```\n$ export AWS_ENDPOINT_URL_S3=https://s3.helix.internal\n$ nextflow run main.nf -profile slurm ...\n"
     "botocore.exceptions.ClientError: An error occurred (InvalidAccessKeyId) when calling the PutObject "
     "operation: The AWS Access Key Id you provided does not exist in our records.\n```",
     None),
    ("s3_endpoint_var", "claude",
     "In `helix/storage/client.py` I need to add a staging profile pointing at a second object store. Which env "
     "var does our storage wrapper actually read for the endpoint URL these days?",
     None),
    # varcall_owner
    ("varcall_owner", "claude",
     "I want to bump the DeepVariant container tag in `modules/varcall/deepvariant.nf` and change `--min_mapping_quality`. "
     "Who has to approve that PR?",
     None),
    ("varcall_owner", "codex",
     "who owns the variant calling stage? need a reviewer for the glnexus config change",
     None),
    # flaky_plate_test
    ("flaky_plate_test", "claude-log",
     "CI just went red on a test I didn't touch (my PR only changes the Streamlit sidebar). Is this a real failure?\n\n"
     "```\nFAILED tests/lims/test_barcodes.py - AssertionError: expected plate PL-20261206-07, got PL-20261207-01\n"
     "ran at 2026-12-06T23:58:41Z\n```",
     None),
    ("flaky_plate_test", "codex-tool",
     "nightly failed in lims barcodes tests, should i investigate",
     ("pytest -q tests/lims/test_barcodes.py",
      "F.....\nFAILED ...::test_plate_reu... - plate id date mismatch (run 00:01:12 UTC)\n1 failed, 5 passed")),
    # consent_restricted
    ("consent_restricted", "claude",
     "Write a script `scripts/mirror_to_cloud.py` that syncs published CRAMs from our on-prem store to the cloud "
     "mirror bucket. Is there any sample category we're not allowed to copy out? Data protection people are watching "
     "this one.",
     None),
    ("consent_restricted", "claude-after-compact",
     "Next: the collaborators want all the cohort_b7 gVCFs in their cloud account. Before I set up the sync, which "
     "consent restriction do I need to filter on?",
     None),
    # scratch_purge
    ("scratch_purge", "claude-tool",
     "My -resume stopped working, every task is re-running from scratch. What happened to the cache?",
     ("ls /scratch/helix/work/3f/",
      "ls: cannot access '/scratch/helix/work/3f/': No such file or directory")),
    ("scratch_purge", "codex",
     "when does the scratch work dir get wiped? planning a long run over the weekend",
     None),
    # snakemake_frozen
    ("snakemake_frozen", "claude",
     "There's a bug in the legacy Snakemake rules for the RNA-seq path. Before I spend time there: which of those "
     "rules are actually still live in production?",
     None),
    ("snakemake_frozen", "claude-tool",
     "Can I just delete the legacy snakemake folder? Looks dead.",
     ("grep -rn 'rule ' legacy/snakemake/Snakefile | wc -l",
      "41")),
    # sample_id_format
    ("sample_id_format", "claude-tool",
     "The bulk import from the Cambridge site is rejected for every row. What format does the validator expect?",
     ("python manage.py import_samples intake/cb_batch_12.csv",
      "ValidationError: row 1: sample_id 'hx-24cb-417' does not match SAMPLE_ID_RE\n"
      "ValidationError: row 2: sample_id 'hx-24cb-418' does not match SAMPLE_ID_RE\n... 94 more")),
    ("sample_id_format", "codex",
     "need a regex for our sample ids in the streamlit search box, what's the exact pattern",
     None),
    # dashboard_host
    ("dashboard_host", "claude-after-compact",
     "Now I want to deploy the refactored parser. Which machine does the QC dashboard actually run on so I can "
     "restart the service there?",
     None),
    ("dashboard_host", "codex-tool",
     "dashboard is down, where is it hosted",
     ("curl -I https://qc.helix.internal",
      "HTTP/2 502\nserver: oauth2-proxy\ncontent-type: text/html")),
    # nextflow_pin
    ("nextflow_pin", "claude-log",
     "After the module refresh on the cluster the pipeline won't even parse. Which Nextflow version are we meant to "
     "be on?\n\n```\nN E X T F L O W  ~  version 24.04.2\nERROR ~ Script compilation error\n"
     "- file : main.nf\n- cause: Unexpected input: 'mergeLanes' @ line 88\n```",
     None),
    ("nextflow_pin", "claude",
     "Setting up the GitHub Actions workflow in `.github/workflows/pipeline-smoke.yml` that runs the test profile. "
     "How do I pin Nextflow to the same version the cluster uses?",
     None),
    # queue_size
    ("queue_size", "claude",
     "Users keep complaining they can't start an interactive srun while a big helixrun cohort is going. Which knob in "
     "the Nextflow config keeps us under the Slurm per-user job limit, and what's it set to?",
     None),
    ("queue_size", "codex-tool",
     "slurm is rejecting submissions mid-run, why",
     ("tail -3 .nextflow.log",
      "sbatch: error: QOSMaxSubmitJobPerUserLimit\n"
      "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy\n"
      "WARN: [SLURM] queue status cannot be fetched")),
    # cram_archive_decision
    ("cram_archive_decision", "claude",
     "Someone suggested Illumina 8-level quality binning on the archived CRAMs to save space. Did we already decide "
     "something about lossy compression for the archive?",
     None),
    ("cram_archive_decision", "claude-after-compact",
     "different topic: how long do we keep BAMs around after alignment before they get dropped?",
     None),
    # lims_migrations
    ("lims_migrations", "claude-log",
     "I added a migration for the new `LibraryPrep.kit_lot` field but it fails on staging. How should migrations be "
     "run here?\n\n```\n$ python manage.py migrate samples\n"
     "django.db.utils.InternalError: cannot execute ALTER TABLE in a read-only transaction\n```",
     None),
    ("lims_migrations", "codex",
     "run the lims migrations for the kit_lot change, any special flags for our db setup?",
     None),
    # joint_calling_schedule
    ("joint_calling_schedule", "claude",
     "The PI wants the three new exomes included in the cohort VCF. When does the next scheduled joint genotyping "
     "happen, or do I need to request a rerun?",
     None),
    ("joint_calling_schedule", "codex",
     "how often does cohort joint calling run",
     None),
    # lims_token_vault
    ("lims_token_vault", "claude-log",
     "The pipeline can't talk to the LIMS anymore since this morning. Where do I get a fresh token?\n\n"
     "```\nhelix.lims.client.AuthError: 401 Unauthorized: token expired (issued 2026-09-07)\n"
     "  File \"helix/lims/client.py\", line 64, in mark_run_started\n```",
     None),
    ("lims_token_vault", "claude",
     "Wiring the LIMS bot token into the new CI job. Where is that token stored so I can reference it from the runner?",
     None),
    # contamination_gate
    ("contamination_gate", "claude-tool",
     "Why is this sample blocked from release? Coverage looks great.",
     ("python scripts/sample_metrics.py HX-24CB-00581",
      "sample          mean_cov  pct_dup  freemix\nHX-24CB-00581   41.7      0.081    0.047")),
    ("contamination_gate", "codex",
     "add the contamination check to release_gate.py, what's the freemix threshold we use",
     None),
    # refs_root
    ("refs_root", "claude",
     "The `prepare_reference` process in `modules/ref/prepare.nf` copies the whole bundle into each task dir and it's "
     "eating scratch. Where do the shared references live and how should the module point at them?",
     None),
    ("refs_root", "codex-tool",
     "bwa index missing? where are refs supposed to come from",
     ("nextflow run main.nf -profile slurm --refs_root ./refs",
      "ERROR ~ No such file: ./refs/GRCh38/bwa-mem2/genome.fa.0123")),
)

NULL_TURNS = (
    ("claude",
     "Add a docstring and type hints to `helix/lims/client.py::mark_run_started`; keep the behaviour identical.",
     None),
    ("codex",
     "rename the streamlit page 02_samples.py to 02_sample_overview.py and fix imports",
     None),
    ("claude-tool",
     "This test started failing after my refactor of the MultiQC parser, can you fix it?",
     ("pytest -q tests/dashboard/test_multiqc_parser.py",
      "E   KeyError: 'picard_dups'\n1 failed, 11 passed")),
    ("claude",
     "Write a unit test for the Sample model's `__str__` in the LIMS, plus one for the Plate model ordering.",
     None),
    ("codex-tool",
     "fix the lint",
     ("ruff check helix/storage/",
      "helix/storage/client.py:12:1: F401 `os` imported but unused\nFound 1 error.")),
    ("claude-after-compact",
     "Go ahead and update the dashboard README with the new parser function names from the summary.",
     None),
    ("claude-log",
     "What does this Python error mean? Just explain, no code changes.\n\n"
     "```\nTypeError: unsupported operand type(s) for /: 'str' and 'int'\n"
     "  File \"dashboard/utils.py\", line 31, in pct\n```",
     None),
    ("codex",
     "convert the nextflow process in modules/qc/mosdepth.nf to use a tuple input with meta map like the other modules",
     None),
    ("claude",
     "Can you explain the difference between a gVCF and a regular VCF in a couple of sentences for the onboarding doc?",
     None),
    ("claude-tool",
     "Summarise what this git log says changed in the variant-calling module this week.",
     ("git log --oneline -4 -- modules/varcall/",
      "a91c2e0 varcall: split deepvariant make_examples into shards\n"
      "7d03b1f varcall: add meta.id to output names\n"
      "c55e912 varcall: tidy publishDir\n0b2e7aa varcall: bump test data")),
    ("codex",
     "make the sample table on the dashboard sortable by column",
     None),
    ("claude",
     "In `helix/storage/client.py`, replace the manual retry loop around `put_object` with a small exponential "
     "backoff helper; three attempts max, and log each retry at WARNING.",
     None),
)

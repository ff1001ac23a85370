import json
import re
import sys

# Generators of the synthcity backend run in their own environment (.venv-synthcity, envs/synthcity.txt);
# every other backend runs in the main one. The two generate rules split the generator names
# between them, so each synthetic file has exactly one producer.
ISOLATED_BACKENDS = {"synthcity"}
ISOLATED_GENERATORS = [g for g, spec in GENERATOR_SPECS.items() if spec["backend"] in ISOLATED_BACKENDS]
MAIN_GENERATORS = [g for g in GENERATOR_SPECS if g not in ISOLATED_GENERATORS]
SYNTHCITY_VENV = os.path.join(workflow.basedir, ".venv-synthcity")


def generator_runtime(wildcards, attempt):
    """Cluster run time (minutes) of a generate job: its generator's `timeout` with 20% margin for
    loading and writing, or one hour without a timeout; doubled on a retry."""
    import math

    timeout = GENERATOR_SPECS[wildcards.generator].get("timeout")
    minutes = math.ceil(timeout * 1.2 / 60) + 5 if timeout else 60
    return minutes * attempt


def names_pattern(names):
    return "|".join(re.escape(name) for name in names) if names else "(?!)"  # (?!) matches nothing


rule generate:
    input:
        train="results/data/{dataset}/seed{seed}/train.parquet",
        schema=dataset_schema,
    output:
        synthetic="results/synthetic/{dataset}/{generator}/seed{seed}.parquet",
        status="results/synthetic/{dataset}/{generator}/seed{seed}.json",
    params:
        spec=lambda wc: GENERATOR_SPECS[wc.generator],
        n=synthetic_rows,
    wildcard_constraints:
        generator=names_pattern(MAIN_GENERATORS),
    log:
        "results/logs/generate/{dataset}/{generator}/seed{seed}.log",
    benchmark:
        "results/benchmarks/generate/{dataset}/{generator}/seed{seed}.tsv"
    threads: 1
    resources:
        runtime=generator_runtime,
    group:
        "synthetic_run"
    script:
        "../../scripts/generate.py"


# Built once, in the repository (on a cluster: on the shared file system, by the controlling
# process rather than a compute job), and only when a configured generator needs it.
rule synthcity_env:
    input:
        os.path.join(workflow.basedir, "envs/synthcity.txt"),
    output:
        os.path.join(SYNTHCITY_VENV, ".installed"),
    params:
        venv=SYNTHCITY_VENV,
        python=sys.executable,
        repo=workflow.basedir,
    log:
        "results/logs/synthcity_env.log",
    shell:
        "({params.python} -m venv --clear {params.venv}"
        " && {params.venv}/bin/pip install --disable-pip-version-check -r {input}"
        " && {params.venv}/bin/pip install --disable-pip-version-check --no-deps -e {params.repo}"
        " && touch {output}) > {log} 2>&1"


rule generate_isolated:
    input:
        train="results/data/{dataset}/seed{seed}/train.parquet",
        schema=dataset_schema,
        env=os.path.join(SYNTHCITY_VENV, ".installed"),
    output:
        synthetic="results/synthetic/{dataset}/{generator}/seed{seed}.parquet",
        status="results/synthetic/{dataset}/{generator}/seed{seed}.json",
    params:
        spec=lambda wc: json.dumps(GENERATOR_SPECS[wc.generator]),
        n=synthetic_rows,
        python=os.path.join(SYNTHCITY_VENV, "bin/python"),
        script=os.path.join(workflow.basedir, "scripts/generate_isolated.py"),
    wildcard_constraints:
        generator=names_pattern(ISOLATED_GENERATORS),
    log:
        job="results/logs/generate/{dataset}/{generator}/seed{seed}.log",
        # What the libraries write below Python (torch, C extensions) lands here.
        stream="results/logs/generate/{dataset}/{generator}/seed{seed}.stream.log",
    benchmark:
        "results/benchmarks/generate/{dataset}/{generator}/seed{seed}.tsv"
    threads: 1
    resources:
        runtime=generator_runtime,
    group:
        "synthetic_run"
    shell:
        "{params.python} {params.script} --name {wildcards.generator} --spec {params.spec:q}"
        " --train {input.train} --schema {input.schema} --n {params.n} --seed {wildcards.seed}"
        " --threads {threads} --synthetic {output.synthetic} --status {output.status}"
        " --log {log.job} > {log.stream} 2>&1"

import json
import re
import sys
from pathlib import Path

from synthrisk.generators.environments import (GENERATE_JOB_REQUIREMENTS, environment_dir,
                                               generator_environment, generator_environments, interpreter)

# A generator with an environment of its own (`environment:` in its config entry, or its backend's
# default: synthcity's envs/synthcity.txt) runs there; every other one in the main environment. The
# two generate rules split the generator names between them, so each synthetic file has exactly one
# producer.
ENVIRONMENTS = {env: str(path) for env, path in generator_environments(GENERATOR_SPECS, workflow.basedir).items()}
GENERATOR_ENVIRONMENT = {g: generator_environment(spec, workflow.basedir) for g, spec in GENERATOR_SPECS.items()}
ISOLATED_GENERATORS = [g for g, env in GENERATOR_ENVIRONMENT.items() if env is not None]
MAIN_GENERATORS = [g for g in GENERATOR_SPECS if g not in ISOLATED_GENERATORS]


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
    conda:
        MAIN_CONDA_ENV
    script:
        "../../scripts/generate.py"


# Built once per requirements file (on a cluster: on the shared file system, by the controlling
# process rather than a compute job), and only when a configured generator needs it. pip runs in the
# file's folder, so that a relative path in it (`./my_generator`) names a package next to it.
rule generator_env:
    input:
        requirements=lambda wc: ENVIRONMENTS[wc.env],
        job=os.path.join(workflow.basedir, GENERATE_JOB_REQUIREMENTS),
    output:
        touch_file="{home}/.venv-{env}/.installed",
    params:
        venv="{home}/.venv-{env}",
        python=sys.executable,
        repo=lambda wildcards: workflow.basedir,
    wildcard_constraints:
        home=".+",
        env="[^/]+",
    log:
        # beside the environment, which is shared by runs in other working directories
        "{home}/.venv-{env}.log",
    conda:
        MAIN_CONDA_ENV
    shell:
        "(cd $(dirname {input.requirements:q}) && {params.python} -m venv --clear {params.venv:q}"
        " && {params.venv:q}/bin/pip install --disable-pip-version-check -r {input.requirements:q} -r {input.job:q}"
        " && {params.venv:q}/bin/pip install --disable-pip-version-check --no-deps -e {params.repo:q}"
        " && touch {output.touch_file:q}) > {log} 2>&1"


rule generate_isolated:
    input:
        train="results/data/{dataset}/seed{seed}/train.parquet",
        schema=dataset_schema,
        env=lambda wc: environment_stamp(GENERATOR_ENVIRONMENT[wc.generator]),
    output:
        synthetic="results/synthetic/{dataset}/{generator}/seed{seed}.parquet",
        status="results/synthetic/{dataset}/{generator}/seed{seed}.json",
    params:
        spec=lambda wc: json.dumps(GENERATOR_SPECS[wc.generator]),
        n=synthetic_rows,
        python=lambda wc: environment_python(GENERATOR_ENVIRONMENT[wc.generator]),
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
    conda:
        MAIN_CONDA_ENV
    # The hash seed is the replicate's: synthcity's PrivBayes iterates over sets of column names, so its
    # network would otherwise change with each process, and a run with a noise seed would not repeat.
    # The order is no source of privacy (an exponential mechanism is DP whatever order it scores in).
    shell:
        "PYTHONHASHSEED={wildcards.seed} {params.python} {params.script} --name {wildcards.generator} --spec {params.spec:q}"
        " --train {input.train} --schema {input.schema} --n {params.n} --seed {wildcards.seed}"
        " --threads {threads} --synthetic {output.synthetic} --status {output.status}"
        " --log {log.job} > {log.stream} 2>&1"

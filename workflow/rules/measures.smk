# Every measure of a synthetic dataset (synthrisk.measures: RAPID, the membership attacks, utility, ...)
# through one rule per measure, made here from the registry: the rule is named after the measure (so
# resources, logs and benchmark files are per measure) and runs scripts/measure.py, which owns the
# failure path. A measure with units (RAPID: attacker x sensitive attribute) has one job per unit.

MEASURE_INPUTS = {
    "members": "results/data/{dataset}/seed{seed}/train.parquet",
    "non_members": "results/data/{dataset}/seed{seed}/holdout.parquet",
    "aux": "results/data/{dataset}/seed{seed}/aux.parquet",
    # the population the members were drawn from: its row count sets the El Emam member share
    "real": "results/data/{dataset}/real.parquet",
    "synthetic": "results/synthetic/{dataset}/{generator}/seed{seed}.parquet",
    "status": "results/synthetic/{dataset}/{generator}/seed{seed}.json",
}

for _measure in MEASURES.values():
    _run = "seed{seed}/{unit}" if _measure.has_units else "seed{seed}"

    rule:
        name:
            _measure.name
        input:
            **MEASURE_INPUTS,
            schema=dataset_schema,
        output:
            records=f"results/{_measure.name}/{{dataset}}/{{generator}}/{_run}.parquet",
            summary=f"results/{_measure.name}/{{dataset}}/{{generator}}/{_run}.json",
        params:
            measure=_measure.name,
        wildcard_constraints:
            unit=r"[^/]+",
        log:
            f"results/logs/{_measure.name}/{{dataset}}/{{generator}}/{_run}.log",
        benchmark:
            f"results/benchmarks/{_measure.name}/{{dataset}}/{{generator}}/{_run}.tsv"
        threads: _measure.threads
        group:
            "synthetic_run"
        conda:
            MAIN_CONDA_ENV
        script:
            "../../scripts/measure.py"

    rule:
        name:
            f"{_measure.name}_summary"
        input:
            runs=measure_runs(_measure.name),
        output:
            tables=measure_tables(_measure.name),
            figures=[
                report(f"results/figures/{f.stem}.png", category=_measure.title,
                       **({"caption": f"../report/{f.caption}"} if (f.caption or "").endswith(".rst") else {}))
                for f in _measure.figures(DATASETS)
            ],
        params:
            measure=_measure.name,
            tables=lambda wildcards: TABLES_DIR,
            figures=lambda wildcards: FIGURES_DIR,
        localrule: True
        log:
            f"results/logs/{_measure.name}/summary.log",
        benchmark:
            f"results/benchmarks/{_measure.name}_summary.tsv"
        conda:
            MAIN_CONDA_ENV
        script:
            "../../scripts/measure_summary.py"

# Every measure of a synthetic dataset (synthrisk.measures: RAPID, the membership attacks, utility, ...).
# One job per dataset x generator x seed runs them all, one after the other in one process
# (scripts/measure.py -> synthrisk.measures.runner, which owns the failure path: one measure that
# fails or does not apply never stops the others). A process per measure, or per RAPID attacker x
# sensitive attribute, spent more time importing pandas and scikit-learn than measuring. Each
# measure keeps its own outputs, log and summary rule; a measure with units (RAPID) writes one file
# pair per unit into its run directory.

MEASURE_INPUTS = {
    "members": "results/data/{dataset}/seed{seed}/train.parquet",
    "holdout": "results/data/{dataset}/seed{seed}/holdout.parquet",
    "aux": "results/data/{dataset}/seed{seed}/aux.parquet",
    # the population the members were drawn from: its row count sets the El Emam member share
    "real": "results/data/{dataset}/real.parquet",
    "synthetic": "results/synthetic/{dataset}/{generator}/seed{seed}.parquet",
    "status": "results/synthetic/{dataset}/{generator}/seed{seed}.json",
}

if MEASURES:

    rule measures:
        input:
            **MEASURE_INPUTS,
            schema=dataset_schema,
        output:
            **measure_job_outputs(),
        params:
            # where generators with an environment of their own have it (MAMA-MIA runs PrivBayes's search there)
            repo=workflow.basedir,
        log:
            job="results/logs/measures/{dataset}/{generator}/seed{seed}.log",
            **{name: f"results/logs/{name}/{{dataset}}/{{generator}}/seed{{seed}}.log" for name in MEASURES},
        benchmark:
            "results/benchmarks/measures/{dataset}/{generator}/seed{seed}.tsv"
        threads: max(measure.threads for measure in MEASURES.values())
        group:
            "synthetic_run"
        conda:
            MAIN_CONDA_ENV
        script:
            "../../scripts/measure.py"


for _measure in MEASURES.values():

    rule:
        name:
            f"{_measure.name}_summary"
        input:
            runs=measure_job_results(_measure.name),
        output:
            tables=measure_tables(_measure.name),
            figures=[
                report(f"results/figures/{f.stem}.png", category=_measure.title,
                       **({"caption": f"../report/{f.caption}"} if (f.caption or "").endswith(".rst") else {}))
                for f in _measure.outputs.figure_files(_measure.name, DATASETS)
            ],
        params:
            measure=_measure.name,
            runs=measure_runs(_measure.name),
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

# Membership inference for every dataset x generator x seed, then tables and figures.


rule mia:
    input:
        members="results/data/{dataset}/seed{seed}/train.parquet",
        non_members="results/data/{dataset}/seed{seed}/holdout.parquet",
        aux="results/data/{dataset}/seed{seed}/aux.parquet",
        # the population the members were drawn from: its row count sets the El Emam member share
        real="results/data/{dataset}/real.parquet",
        synthetic="results/synthetic/{dataset}/{generator}/seed{seed}.parquet",
        status="results/synthetic/{dataset}/{generator}/seed{seed}.json",
        schema=dataset_schema,
    output:
        records="results/mia/{dataset}/{generator}/seed{seed}.parquet",
        summary="results/mia/{dataset}/{generator}/seed{seed}.json",
    params:
        settings=config.get("mia", {}),
    log:
        "results/logs/mia/{dataset}/{generator}/seed{seed}.log",
    benchmark:
        "results/benchmarks/mia/{dataset}/{generator}/seed{seed}.tsv"
    threads: 2
    group:
        "synthetic_run"
    script:
        "../../scripts/mia.py"


rule mia_summary:
    input:
        runs=per_run("results/mia/{dataset}/{generator}/seed{seed}.json"),
    output:
        table="results/tables/mia.csv",
        thresholds="results/tables/mia_thresholds.csv",
        figures=[
            report(
                f"results/figures/mia_{kind}_{dataset}.png",
                category="Membership inference",
                caption="../report/mia.rst",
            )
            for dataset in DATASETS
            for kind in ("roc", "f1")
        ],
    params:
        tables="results/tables",
        figures="results/figures",
    log:
        "results/logs/mia/summary.log",
    benchmark:
        "results/benchmarks/mia_summary.tsv"
    script:
        "../../scripts/mia_summary.py"

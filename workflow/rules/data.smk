rule load_dataset:
    input:
        schema=dataset_schema,
    output:
        real="results/data/{dataset}/real.parquet",
    log:
        "results/logs/data/{dataset}.log",
    benchmark:
        "results/benchmarks/load_dataset/{dataset}.tsv"
    conda:
        MAIN_CONDA_ENV
    script:
        "../../scripts/load_dataset.py"


rule split:
    input:
        real="results/data/{dataset}/real.parquet",
    output:
        train="results/data/{dataset}/seed{seed}/train.parquet",
        holdout="results/data/{dataset}/seed{seed}/holdout.parquet",
        aux="results/data/{dataset}/seed{seed}/aux.parquet",
    params:
        sizes=lambda wc: config["datasets"][wc.dataset],
    log:
        "results/logs/split/{dataset}/seed{seed}.log",
    benchmark:
        "results/benchmarks/split/{dataset}/seed{seed}.tsv"
    conda:
        MAIN_CONDA_ENV
    script:
        "../../scripts/split.py"

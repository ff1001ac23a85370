rule generate:
    input:
        train="results/data/{dataset}/seed{seed}/train.parquet",
        schema=dataset_schema,
    output:
        synthetic="results/synthetic/{dataset}/{generator}/seed{seed}.parquet",
        status="results/synthetic/{dataset}/{generator}/seed{seed}.json",
    params:
        spec=lambda wc: config["generators"][wc.generator],
        n=lambda wc: config["datasets"][wc.dataset].get(
            "n_synthetic", config["datasets"][wc.dataset]["n_train"]
        ),
    log:
        "results/logs/generate/{dataset}/{generator}/seed{seed}.log",
    benchmark:
        "results/benchmarks/generate/{dataset}/{generator}/seed{seed}.tsv"
    threads: 1
    script:
        "../../scripts/generate.py"

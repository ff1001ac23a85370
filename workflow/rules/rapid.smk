# RAPID for every dataset x generator x seed x attacker x sensitive attribute, then the summary
# and the dependence-strength simulation study.


rule rapid:
    input:
        real="results/data/{dataset}/seed{seed}/train.parquet",
        synthetic="results/synthetic/{dataset}/{generator}/seed{seed}.parquet",
        status="results/synthetic/{dataset}/{generator}/seed{seed}.json",
        schema=dataset_schema,
    output:
        records="results/rapid/{dataset}/{generator}/seed{seed}/{attacker}-{sensitive}.parquet",
        summary="results/rapid/{dataset}/{generator}/seed{seed}/{attacker}-{sensitive}.json",
    params:
        settings=config.get("rapid", {}),
    log:
        "results/logs/rapid/{dataset}/{generator}/seed{seed}/{attacker}-{sensitive}.log",
    benchmark:
        "results/benchmarks/rapid/{dataset}/{generator}/seed{seed}/{attacker}-{sensitive}.tsv"
    threads: 1
    group:
        "synthetic_run"
    script:
        "../../scripts/rapid.py"


rule rapid_summary:
    input:
        runs=all_rapid_runs(),
    output:
        table="results/tables/rapid.csv",
        table_max="results/tables/rapid_max.csv",
        figures=[
            report(
                f"results/figures/rapid_{kind}_{dataset}.png",
                category="RAPID",
                caption="../report/rapid.rst",
            )
            for dataset in DATASETS
            for kind in ("max", "curves", "attribution")
        ],
    params:
        tables="results/tables",
        figures="results/figures",
        figure_attacker=RAPID_ATTACKERS[0],
    log:
        "results/logs/rapid/summary.log",
    benchmark:
        "results/benchmarks/rapid_summary.tsv"
    script:
        "../../scripts/rapid_summary.py"


rule rapid_simulation:
    input:
        schema=simulation_schema_path(),
    output:
        study="results/rapid/simulation_study.csv",
        table="results/tables/rapid_simulation.csv",
        by_strength=report(
            "results/figures/rapid_simulation_strength.png",
            category="RAPID",
            caption="../report/rapid_simulation.rst",
        ),
        curves=report(
            "results/figures/rapid_simulation_curves.png",
            category="RAPID",
            caption="../report/rapid_simulation.rst",
        ),
    params:
        simulation=RAPID_SIMULATION,
        rapid=config.get("rapid", {}),
        generator_spec=lambda wc: GENERATOR_SPECS[RAPID_SIMULATION["generator"]],
    log:
        "results/logs/rapid/simulation.log",
    benchmark:
        "results/benchmarks/rapid_simulation.tsv"
    script:
        "../../scripts/rapid_simulation.py"

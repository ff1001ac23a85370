# Utility next to risk, the summary table and risk-utility figure, and the self-contained report.


rule utility:
    input:
        real="results/data/{dataset}/seed{seed}/train.parquet",
        holdout="results/data/{dataset}/seed{seed}/holdout.parquet",
        synthetic="results/synthetic/{dataset}/{generator}/seed{seed}.parquet",
        status="results/synthetic/{dataset}/{generator}/seed{seed}.json",
        schema=dataset_schema,
    output:
        efficacy="results/utility/{dataset}/{generator}/seed{seed}.parquet",
        summary="results/utility/{dataset}/{generator}/seed{seed}.json",
    log:
        "results/logs/utility/{dataset}/{generator}/seed{seed}.log",
    benchmark:
        "results/benchmarks/utility/{dataset}/{generator}/seed{seed}.tsv"
    threads: 1
    group:
        "synthetic_run"
    script:
        "../../scripts/utility.py"


rule summary:
    input:
        rapid_max="results/tables/rapid_max.csv",
        mia="results/tables/mia.csv",
        thresholds="results/tables/mia_thresholds.csv",
        utility=per_run("results/utility/{dataset}/{generator}/seed{seed}.json"),
        status=per_run("results/synthetic/{dataset}/{generator}/seed{seed}.json"),
    output:
        table="results/tables/summary.csv",
        utility="results/tables/utility.csv",
        efficacy="results/tables/utility_efficacy.csv",
        figures=[
            report(
                f"results/figures/risk_utility_{dataset}.png",
                category="Risk and utility",
                caption="../report/risk_utility.rst",
            )
            for dataset in DATASETS
        ],
    params:
        specs=GENERATOR_SPECS,
        tables="results/tables",
        figures="results/figures",
    log:
        "results/logs/report/summary.log",
    benchmark:
        "results/benchmarks/summary.tsv"
    script:
        "../../scripts/summary.py"


def report_figures():
    figures = list(rules.summary.output.figures) + list(rules.rapid_summary.output.figures)
    figures += list(rules.mia_summary.output.figures)
    if rapid_simulation_target():
        figures += [rules.rapid_simulation.output.by_strength, rules.rapid_simulation.output.curves]
    figures += expand("results/figures/dp_{experiment}.png", experiment=DP_EXPERIMENTS)
    return figures


def report_tables():
    names = ["summary", "rapid_max", "rapid", "mia", "utility", "utility_efficacy"]
    names += ["rapid_simulation"] if rapid_simulation_target() else []
    names += [f"dp_{experiment}" for experiment in DP_EXPERIMENTS]
    return {name: f"results/tables/{name}.csv" for name in names}


rule report:
    input:
        **report_tables(),
        figures=report_figures(),
    output:
        "results/report/index.html",
    params:
        config=config,
        captions=os.path.join(workflow.basedir, "workflow/report"),
        workflow_dir=workflow.basedir,
        benchmarks="results/benchmarks",
        tables=list(report_tables()),
    log:
        "results/logs/report/index.log",
    benchmark:
        "results/benchmarks/report.tsv"
    script:
        "../../scripts/report.py"

# The summary table with one verdict per risk, the risk-utility figure, and the self-contained report.


rule summary:
    input:
        tables=all_measure_tables(),
        status=per_run("results/synthetic/{dataset}/{generator}/seed{seed}.json"),
    output:
        table="results/tables/summary.csv",
        risk="results/tables/risk.csv",
        figures=[
            report(
                f"results/figures/risk_utility_{dataset}.png",
                category="Risk and utility",
                caption="../report/risk_utility.rst",
            )
            for dataset in DATASETS
        ]
        + [
            report(
                f"results/figures/risk_evidence_{dataset}.png",
                category="Risk and utility",
                caption="../report/risk_evidence.rst",
            )
            for dataset in DATASETS
        ],
    params:
        specs=GENERATOR_SPECS,
        tables=lambda wildcards: TABLES_DIR,
        figures=lambda wildcards: FIGURES_DIR,
    log:
        "results/logs/report/summary.log",
    benchmark:
        "results/benchmarks/summary.tsv"
    conda:
        MAIN_CONDA_ENV
    script:
        "../../scripts/summary.py"


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
    conda:
        MAIN_CONDA_ENV
    script:
        "../../scripts/report.py"

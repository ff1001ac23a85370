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
        tables="results/tables",
        figures="results/figures",
    log:
        "results/logs/report/summary.log",
    benchmark:
        "results/benchmarks/summary.tsv"
    script:
        "../../scripts/summary.py"


def report_figures():
    figures = list(rules.summary.output.figures)
    figures += [path for name in MEASURES for path in measure_figures(name)]
    if rapid_simulation_target():
        figures += [rules.rapid_simulation.output.by_strength, rules.rapid_simulation.output.curves]
    figures += expand("results/figures/dp_{experiment}.png", experiment=DP_EXPERIMENTS)
    figures += [path for path in privacy_audit_targets() if path.endswith(".png")]
    return figures


def report_tables():
    names = ["summary", "risk"] + [table for measure in MEASURES.values() for table in measure.tables()]
    names += ["rapid_simulation"] if rapid_simulation_target() else []
    names += [f"dp_{experiment}" for experiment in DP_EXPERIMENTS]
    names += ["privacy_audit"] if privacy_audit_targets() else []
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

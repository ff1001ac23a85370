# The summary table with one verdict per risk, the risk-utility figure, and the self-contained report.

from synthrisk.report.provenance import git_revision


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
    return figures


def report_tables():
    names = ["summary", "risk"] + [table for measure in MEASURES.values() for table in measure.tables()]
    names += ["rapid_simulation"] if rapid_simulation_target() else []
    names += [f"dp_{experiment}" for experiment in DP_EXPERIMENTS]
    return {name: f"results/tables/{name}.csv" for name in names}


# The run's provenance, written once its tables and figures are complete: commit, configuration
# (as run, and its hash), synthrisk and package versions, and when it completed. The report,
# `synthrisk findings` and bundles read it instead of asking the clock or the checkout again, so a
# run renders to the same bytes however often it is rendered. The revision is a parameter, so a new
# commit (or local changes) reruns this rule and what reads it, not the measures.
rule provenance:
    input:
        **report_tables(),
        figures=report_figures(),
    output:
        provenance="results/provenance.json",
        config="results/config.yaml",
    params:
        configfiles=[str(path) for path in workflow.configfiles],
        revision=git_revision(workflow.basedir),
        workflow_dir=workflow.basedir,
    log:
        "results/logs/report/provenance.log",
    script:
        "../../scripts/provenance.py"


rule report:
    input:
        **report_tables(),
        figures=report_figures(),
        provenance=rules.provenance.output.provenance,
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


# REPRODUCE.md for this run: each published finding of config/findings.yaml next to our number and
# the agreement (synthrisk.findings); `make reproduce` renders the same page from the paper run into
# the repository with `synthrisk findings`.
rule findings:
    input:
        **report_tables(),
        provenance=rules.provenance.output.provenance,
        findings=os.path.join(workflow.basedir, "config/findings.yaml"),
    output:
        "results/findings/REPRODUCE.md",
    log:
        "results/logs/report/findings.log",
    script:
        "../../scripts/findings.py"

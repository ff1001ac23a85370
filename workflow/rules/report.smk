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
    conda:
        MAIN_CONDA_ENV
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
    conda:
        MAIN_CONDA_ENV
    script:
        "../../scripts/report.py"


# REPRODUCE.md for this run: each published finding of config/findings.yaml next to our number and
# the agreement (synthrisk.study.findings); `make reproduce` renders the same page from the paper run into
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
    conda:
        MAIN_CONDA_ENV
    script:
        "../../scripts/findings.py"

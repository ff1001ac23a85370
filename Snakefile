"""synthrisk: load -> split -> generate -> attack (RAPID, MIA) and DP experiments -> report."""

from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")

from synthrisk.config import check_config

check_config(config)


# `attacker` never contains '-' (attacker names are fixed identifiers), so the rapid pattern
# {attacker}-{sensitive} splits `logit-diag-code` into logit and diag-code: any sensitive column name
# that a dataset schema accepts works in file names (the schema refuses '/', braces, control characters).
wildcard_constraints:
    dataset=r"[A-Za-z0-9_]+",
    generator=r"[A-Za-z0-9_]+",
    seed=r"\d+",
    attacker=r"[A-Za-z0-9_]+",


# Quick jobs that read or write a few small files run in the controlling Snakemake process, not as
# cluster jobs; the per-run attack jobs are grouped with their generator (group "synthetic_run") so
# that a cluster sees one job per synthetic dataset instead of a dozen tiny ones.
localrules:
    all,
    load_dataset,
    split,
    rapid_summary,
    mia_summary,
    summary,
    report,
    synthcity_env,


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/generate.smk"
include: "workflow/rules/rapid.smk"
include: "workflow/rules/mia.smk"
include: "workflow/rules/dp.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        all_synthetic(),
        "results/tables/rapid.csv",
        "results/tables/mia.csv",
        rapid_simulation_target(),
        expand("results/tables/dp_{experiment}.csv", experiment=DP_EXPERIMENTS),
        "results/report/index.html",

"""synthrisk: load -> split -> generate -> measure (attacks, utility) and DP experiments -> report."""

from snakemake.utils import min_version, validate

min_version("9.0")


# The default config is read only when the command line names none: Snakemake would otherwise merge
# every --configfile into it, and a user config run from the repository root (`make run
# CONFIG=mine.yaml`) would also run the default datasets, generators and stages. Overlays such as
# config/audit.yaml name their base explicitly: CONFIG="config/config.yaml config/audit.yaml".
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")

from synthrisk.study.config import check_config

check_config(config)


# A measure's unit (RAPID: `{attacker}-{sensitive}`) may hold any sensitive column name that a dataset
# schema accepts (the schema refuses '/', braces, control characters).
wildcard_constraints:
    dataset=r"[A-Za-z0-9_]+",
    generator=r"[A-Za-z0-9_]+",
    seed=r"\d+",


# Quick jobs that read or write a few small files run in the controlling Snakemake process, not as
# cluster jobs (the measures' summary rules say so themselves, in workflow/rules/measures.smk); the
# per-run measure jobs are grouped with their generator (group "synthetic_run") so that a cluster
# sees one job per synthetic dataset instead of a dozen tiny ones.
localrules:
    all,
    load_dataset,
    split,
    summary,
    report,
    generator_env,
    provenance,
    findings,


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/generate.smk"
include: "workflow/rules/measures.smk"
include: "workflow/rules/rapid.smk"
include: "workflow/rules/dp.smk"
include: "workflow/rules/epsilon_audit.smk"
include: "workflow/rules/shadow_mia.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        all_synthetic(),
        all_measure_tables(),
        rapid_simulation_target(),
        expand("results/tables/dp_{experiment}.csv", experiment=DP_EXPERIMENTS),
        epsilon_audit_targets(),
        shadow_mia_results(),
        "results/report/index.html",
        "results/findings/REPRODUCE.md",

# Empirical epsilon audit of DP generators (synthrisk.privacy_audit): blocks of fits with and without a
# worst-case canary, gathered into one table and one figure. Runs only when the config has a
# `privacy_audit:` block (config/audit.yaml); its defaults: synthrisk.privacy_audit.stage.DEFAULTS.

from synthrisk.privacy_audit import stage as privacy_audit_stage

PRIVACY_AUDIT = (
    privacy_audit_stage.settings_from_config(config["privacy_audit"], GENERATOR_SPECS, config["datasets"])
    if "privacy_audit" in config
    else None
)


if PRIVACY_AUDIT:

    rule privacy_audit_fits:
        input:
            real=lambda wc: f"results/data/{PRIVACY_AUDIT['dataset']}/real.parquet",
            schema=lambda wc: schema_path(PRIVACY_AUDIT["dataset"]),
        output:
            "results/privacy_audit/{generator}/eps{epsilon}/{world}/block{block}.csv",
        params:
            settings=PRIVACY_AUDIT,
        wildcard_constraints:
            epsilon=r"[0-9.e+-]+",
            world="without|with",
            block=r"\d+",
        log:
            "results/logs/privacy_audit/{generator}/eps{epsilon}/{world}/block{block}.log",
        benchmark:
            "results/benchmarks/privacy_audit/{generator}/eps{epsilon}/{world}/block{block}.tsv"
        conda:
            MAIN_CONDA_ENV
        script:
            "../../scripts/privacy_audit_fits.py"

    rule privacy_audit_table:
        input:
            blocks=privacy_audit_blocks(),
        output:
            table="results/tables/privacy_audit.csv",
            figure=report(
                "results/figures/privacy_audit.png",
                category="Empirical ε audit",
                caption="../report/privacy_audit.rst",
            ),
        params:
            settings=PRIVACY_AUDIT,
            tables=lambda wildcards: TABLES_DIR,
        # reads a few small tables and draws one figure: no cluster job
        localrule: True
        log:
            "results/logs/privacy_audit/table.log",
        benchmark:
            "results/benchmarks/privacy_audit_table.tsv"
        conda:
            MAIN_CONDA_ENV
        script:
            "../../scripts/privacy_audit_table.py"

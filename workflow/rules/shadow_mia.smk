# Per-target shadow-model membership inference (synthrisk.shadow_mia): the population plan (targets
# and pools), blocks of shadow fits per (generator, role), gathered into two tables and two figures.
# Runs only when the config has a `shadow_mia:` block (config/audit.yaml); its defaults:
# synthrisk.shadow_mia.stage.DEFAULTS.

from synthrisk.shadow_mia import stage as shadow_mia_stage

SHADOW_MIA = (
    shadow_mia_stage.settings_from_config(config["shadow_mia"], GENERATOR_SPECS, config["datasets"], SEEDS)
    if "shadow_mia" in config
    else None
)


if SHADOW_MIA:

    rule shadow_mia_plan:
        input:
            unpack(shadow_mia_population),
            schema=lambda wc: schema_path(SHADOW_MIA["dataset"]),
        output:
            "results/shadow_mia/plan.parquet",
        params:
            settings=shadow_mia_stage.plan_settings(SHADOW_MIA),
        log:
            "results/logs/shadow_mia/plan.log",
        benchmark:
            "results/benchmarks/shadow_mia/plan.tsv"
        conda:
            MAIN_CONDA_ENV
        script:
            "../../scripts/shadow_mia_plan.py"

    # One job fits a block of `block` shadow datasets (the first knob of the number of submissions);
    # the blocks share the group "shadow_mia", so a cluster run can merge them further with
    # --group-components shadow_mia=N (N blocks per submission).
    rule shadow_mia_block:
        input:
            unpack(shadow_mia_population),
            plan="results/shadow_mia/plan.parquet",
            schema=lambda wc: schema_path(SHADOW_MIA["dataset"]),
        output:
            "results/shadow_mia/{generator}/{role}/block{block}.parquet",
        params:
            settings=lambda wc: shadow_mia_stage.block_settings(SHADOW_MIA, wc.generator),
        wildcard_constraints:
            role="train|eval",
            block=r"\d+",
        log:
            "results/logs/shadow_mia/{generator}/{role}/block{block}.log",
        benchmark:
            "results/benchmarks/shadow_mia/{generator}/{role}/block{block}.tsv"
        threads: 1
        group:
            "shadow_mia"
        conda:
            MAIN_CONDA_ENV
        script:
            "../../scripts/shadow_mia_block.py"

    rule shadow_mia_table:
        input:
            plan="results/shadow_mia/plan.parquet",
            blocks=shadow_mia_blocks(),
        output:
            targets="results/tables/shadow_mia_targets.csv",
            generators="results/tables/shadow_mia.csv",
            auc=report(
                "results/figures/shadow_mia_auc.png",
                category="Shadow-model membership inference",
                caption="../report/shadow_mia.rst",
            ),
            vulnerable=report(
                "results/figures/shadow_mia_vulnerable.png",
                category="Shadow-model membership inference",
                caption="../report/shadow_mia.rst",
            ),
        params:
            settings=SHADOW_MIA,
            tables=lambda wildcards: TABLES_DIR,
        # trains one small forest per (generator, target) on a few hundred feature rows: no cluster job
        localrule: True
        log:
            "results/logs/shadow_mia/table.log",
        benchmark:
            "results/benchmarks/shadow_mia_table.tsv"
        conda:
            MAIN_CONDA_ENV
        script:
            "../../scripts/shadow_mia_table.py"

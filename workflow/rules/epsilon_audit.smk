# Empirical epsilon audit of DP generators (synthrisk.epsilon_audit): blocks of fits with and without a
# worst-case canary, gathered into one table and one figure. Runs only when the config has a
# `epsilon_audit:` block (config/audit.yaml); its defaults: synthrisk.epsilon_audit.stage.DEFAULTS.

from synthrisk.epsilon_audit import stage as epsilon_audit_stage

PRIVACY_AUDIT = (
    epsilon_audit_stage.settings_from_config(config["epsilon_audit"], GENERATOR_SPECS, config["datasets"])
    if "epsilon_audit" in config
    else None
)
# An audited generator with an environment of its own (synthcity's DP plugins) fits its blocks there,
# like its generate jobs (generate.smk); its environment joins the ones the workflow builds.
AUDIT_SPECS = PRIVACY_AUDIT["specs"] if PRIVACY_AUDIT else {}
# (checked together with the run's generators: two requirements files may not share a name)
ENVIRONMENTS.update({env: str(path) for env, path in
                     generator_environments({**GENERATOR_SPECS, **AUDIT_SPECS}, workflow.basedir).items()})
AUDIT_ENVIRONMENT = {g: generator_environment(spec, workflow.basedir) for g, spec in AUDIT_SPECS.items()}
AUDIT_ISOLATED = [g for g, env in AUDIT_ENVIRONMENT.items() if env is not None]
AUDIT_MAIN = [g for g in AUDIT_SPECS if g not in AUDIT_ISOLATED]


if PRIVACY_AUDIT:

    rule epsilon_audit_fits:
        input:
            real=lambda wc: f"results/data/{PRIVACY_AUDIT['dataset']}/real.parquet",
            schema=lambda wc: schema_path(PRIVACY_AUDIT["dataset"]),
        output:
            "results/epsilon_audit/{generator}/eps{epsilon}/{world}/block{block}.csv",
        params:
            settings=lambda wc: epsilon_audit_stage.block_settings(PRIVACY_AUDIT, wc.generator),
        wildcard_constraints:
            epsilon=r"[0-9.e+-]+",
            world="without|with",
            block=r"\d+",
            generator=names_pattern(AUDIT_MAIN),
        log:
            "results/logs/epsilon_audit/{generator}/eps{epsilon}/{world}/block{block}.log",
        benchmark:
            "results/benchmarks/epsilon_audit/{generator}/eps{epsilon}/{world}/block{block}.tsv"
        conda:
            MAIN_CONDA_ENV
        script:
            "../../scripts/epsilon_audit_fits.py"

    rule epsilon_audit_fits_isolated:
        input:
            real=lambda wc: f"results/data/{PRIVACY_AUDIT['dataset']}/real.parquet",
            schema=lambda wc: schema_path(PRIVACY_AUDIT["dataset"]),
            env=lambda wc: environment_stamp(AUDIT_ENVIRONMENT[wc.generator]),
        output:
            "results/epsilon_audit/{generator}/eps{epsilon}/{world}/block{block}.csv",
        params:
            settings=lambda wc: json.dumps(epsilon_audit_stage.block_settings(PRIVACY_AUDIT, wc.generator)),
            python=lambda wc: environment_python(AUDIT_ENVIRONMENT[wc.generator]),
            script=os.path.join(workflow.basedir, "scripts/epsilon_audit_fits_isolated.py"),
        wildcard_constraints:
            epsilon=r"[0-9.e+-]+",
            world="without|with",
            block=r"\d+",
            generator=names_pattern(AUDIT_ISOLATED),
        log:
            job="results/logs/epsilon_audit/{generator}/eps{epsilon}/{world}/block{block}.log",
            # what the libraries write below Python (torch, C extensions)
            stream="results/logs/epsilon_audit/{generator}/eps{epsilon}/{world}/block{block}.stream.log",
        benchmark:
            "results/benchmarks/epsilon_audit/{generator}/eps{epsilon}/{world}/block{block}.tsv"
        conda:
            MAIN_CONDA_ENV
        shell:
            "{params.python:q} {params.script:q} --generator {wildcards.generator} --epsilon {wildcards.epsilon}"
            " --world {wildcards.world} --block {wildcards.block} --settings {params.settings:q}"
            " --real {input.real:q} --schema {input.schema:q} --output {output:q} --log {log.job:q}"
            " > {log.stream:q} 2>&1"

    rule epsilon_audit_table:
        input:
            blocks=epsilon_audit_blocks(),
            # the audited records, on which MAMA-MIA's focal points are found
            real=lambda wc: f"results/data/{PRIVACY_AUDIT['dataset']}/real.parquet",
            schema=lambda wc: schema_path(PRIVACY_AUDIT["dataset"]),
        output:
            table="results/tables/epsilon_audit.csv",
            figure=report(
                "results/figures/epsilon_audit.png",
                category="Empirical ε audit",
                caption="../report/epsilon_audit.rst",
            ),
        params:
            settings=PRIVACY_AUDIT,
            tables=lambda wildcards: TABLES_DIR,
        # reads a few small tables and draws one figure: no cluster job
        localrule: True
        log:
            "results/logs/epsilon_audit/table.log",
        benchmark:
            "results/benchmarks/epsilon_audit_table.tsv"
        conda:
            MAIN_CONDA_ENV
        script:
            "../../scripts/epsilon_audit_table.py"

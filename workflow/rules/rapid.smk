# The RAPID dependence-strength simulation study (RAPID on each synthetic dataset is a measure:
# workflow/rules/measures.smk).


rule rapid_simulation:
    input:
        schema=simulation_schema_path(),
    output:
        study="results/rapid/simulation_study.csv",
        table="results/tables/rapid_simulation.csv",
        by_strength=report(
            "results/figures/rapid_simulation_strength.png",
            category="RAPID",
            caption="../report/rapid_simulation.rst",
        ),
        curves=report(
            "results/figures/rapid_simulation_curves.png",
            category="RAPID",
            caption="../report/rapid_simulation.rst",
        ),
    params:
        simulation=RAPID_SIMULATION,
        rapid=config.get("rapid", {}),
        generator_spec=lambda wc: GENERATOR_SPECS[RAPID_SIMULATION["generator"]],
    log:
        "results/logs/rapid/simulation.log",
    benchmark:
        "results/benchmarks/rapid_simulation.tsv"
    conda:
        MAIN_CONDA_ENV
    script:
        "../../scripts/rapid_simulation.py"

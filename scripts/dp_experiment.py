from synthrisk.study.workflow import logged

with logged(snakemake):
    from synthrisk.data import load_dataset, load_schema
    from synthrisk.dp import stage
    from synthrisk.io import read_table

    experiment = snakemake.wildcards.experiment
    settings = stage.settings_from_config(snakemake.params.settings)
    inputs = dict(snakemake.input.items())
    adult = load_dataset(load_schema(inputs["adult_schema"])) if "adult_schema" in inputs else None
    grid = read_table(inputs["grid"]) if "grid" in inputs else None
    tables = stage.run(experiment, settings, seed=int(snakemake.params.seed), adult=adult, grid=grid)
    for name, frame in tables.items():
        print(f"{name}:\n{frame.to_string(max_rows=60)}\n")
    stage.write(experiment, tables, snakemake.output.results, snakemake.params.tables, snakemake.output.figure)

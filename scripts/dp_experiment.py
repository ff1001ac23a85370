from synthrisk.workflow import logged

with logged(snakemake):
    from synthrisk.data import load_dataset, load_schema
    from synthrisk.dp import stage

    experiment = snakemake.wildcards.experiment
    settings = stage.settings_from_config(snakemake.params.settings)
    adult = load_dataset(load_schema(snakemake.input.adult_schema)) if experiment == "census" else None
    tables = stage.run(experiment, settings, seed=int(snakemake.params.seed), adult=adult)
    for name, frame in tables.items():
        print(f"{name}:\n{frame.to_string(max_rows=60)}\n")
    stage.write(experiment, tables, snakemake.output.results, snakemake.params.tables, snakemake.output.figure)

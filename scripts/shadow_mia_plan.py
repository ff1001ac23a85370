from synthrisk.study.workflow import logged

with logged(snakemake):
    from synthrisk.data import load_schema
    from synthrisk.io import read_table, write_table
    from synthrisk.shadow_mia import stage

    frames = {name: read_table(snakemake.input[name]) for name in stage.POPULATION_FILES}
    plan = stage.run_plan(frames, load_schema(snakemake.input.schema), snakemake.params.settings)
    print(plan.groupby(["pool", "kind"], dropna=False).size().to_string())
    write_table(plan, snakemake.output[0])

from synthrisk.study.workflow import logged

with logged(snakemake):
    from synthrisk.data import load_schema
    from synthrisk.epsilon_audit import stage
    from synthrisk.io import read_table

    settings = snakemake.params.settings
    blocks = {}
    for path in snakemake.input.blocks:  # results/epsilon_audit/{generator}/eps{epsilon}/{world}/block{b}.csv
        generator, epsilon, world = path.split("/")[-4:-1]
        blocks.setdefault((generator, float(epsilon[3:]), world), []).append(read_table(path))
    weights = stage.focal_weights_of(read_table(snakemake.input.real), load_schema(snakemake.input.schema), settings)
    table = stage.gather(blocks, settings, weights)
    print(table.to_string())
    stage.write(table, snakemake.params.tables, snakemake.output.figure)
    print(stage.summary_line(table))

from synthrisk.study.workflow import logged

with logged(snakemake):
    from synthrisk.generators.run import generate_files

    generate_files(snakemake.wildcards.generator, snakemake.params.spec, snakemake.input.train,
                   snakemake.input.schema, snakemake.params.n, int(snakemake.wildcards.seed),
                   snakemake.output.synthetic, snakemake.output.status)

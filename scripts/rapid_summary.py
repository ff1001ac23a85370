from synthrisk.workflow import logged

with logged(snakemake):
    from synthrisk.rapid.summary import write_summary

    write_summary(snakemake.input.runs, snakemake.params.tables, snakemake.params.figures,
                  snakemake.params.figure_attacker)

from synthrisk.study.workflow import logged

with logged(snakemake):
    from synthrisk.study.findings import render

    # The working directory of a job is the run's directory: render what this run holds.
    with open(snakemake.output[0], "w") as handle:
        handle.write(render(".", snakemake.input.findings))
